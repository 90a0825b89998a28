// Test for line comment
package /* Test for inline comment */ main

import "fmt"

func main() {
    fmt.Println("Hello, World!")
}
