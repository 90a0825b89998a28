// Test for line comment
package /* Test for inline comment */ notmain

import "fmt"

func main() {
    fmt.Println("Hello, World!")
}
