/*
 * This should give CORRECT on the default problem 'hello'.
 *
 * @EXPECTED_RESULTS@: CORRECT
 */
package main

import (
	"fmt"
)

func main() {
	fmt.Println("Hello world!")
}
