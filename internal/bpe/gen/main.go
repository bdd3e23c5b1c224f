// Command gen writes the token files that package bpe embeds: for each
// encoding bpe supports, the tokens of tiktoken-go-loader's rank file in the
// compact form that bpe reads without parsing.
//
// Run it through go generate in internal/bpe:
//
//	go generate ./internal/bpe
//
// The form of a file NAME.tokens is: the number n of ranks as 4 bytes, little
// endian; then n bytes, the length of the token of each rank in order (0 for
// a rank without a token); then the bytes of all tokens, in rank order, with
// nothing between them. bpe's readTokens is the reader; TestTokenFiles holds
// the files to tiktoken-go-loader's.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	dir := flag.String("dir", ".", "where to write the token files")
	flag.Parse()
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		if err := write(*dir, name); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

func write(dir, name string) error {
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	n := 0
	for _, r := range ranks {
		n = max(n, r+1)
	}
	tokens := make([]string, n)
	for tok, r := range ranks {
		switch {
		case r < 0:
			return fmt.Errorf("%s: negative rank %d", name, r)
		case tok == "" || len(tok) > 255:
			return fmt.Errorf("%s: rank %d has a token of %d bytes, want 1 to 255", name, r, len(tok))
		case tokens[r] != "":
			return fmt.Errorf("%s: rank %d has two tokens", name, r)
		}
		tokens[r] = tok
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(n))
	for _, tok := range tokens {
		out = append(out, byte(len(tok)))
	}
	for _, tok := range tokens {
		out = append(out, tok...)
	}
	return os.WriteFile(filepath.Join(dir, name+".tokens"), out, 0o644)
}
