// Command countonly prints the o200k_base token count of the file named by
// its argument, or of standard input, and imports nothing of ctxfit but
// budget: TestWeight builds it to measure what a token-counting program
// links.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ctxfit/ctxfit/budget"
)

func main() {
	c, err := budget.Exact("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var text []byte
	if len(os.Args) > 1 {
		text, err = os.ReadFile(os.Args[1])
	} else {
		text, err = io.ReadAll(os.Stdin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(c.Count(string(text)))
}
