// Command testsum reads `go test -json` on its standard input and writes
// what a person reads of a test run: a line per package (ok, FAIL, no test
// files), build errors, panics, and the whole output of each failed test
// (its logs included), but nothing of the tests that passed. At the end it
// lists the failed tests, and with -counts FILE it adds the run's passed,
// failed and skipped tests (subtests included) to FILE, so that test.sh can
// close with the counts of all its runs:
//
//	go test -json ./... | go run ./scripts/testsum -counts /tmp/counts
//	go run ./scripts/testsum -total /tmp/counts   # "N passed, N failed, N skipped"
//
// It exits with 1 when a test or a package failed, so a pipeline with
// pipefail fails with it.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is a line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail
	Test       string
	Output     string
}

type counts struct{ Passed, Failed, Skipped int }

func main() {
	file := flag.String("counts", "", "add the run's counts to this file (created if missing)")
	total := flag.String("total", "", "print the counts in this file as the closing line, and exit")
	flag.Parse()
	if *total != "" {
		c, err := read(*total)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		fmt.Printf("%d passed, %d failed, %d skipped\n", c.Passed, c.Failed, c.Skipped)
		return
	}
	c, failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if *file != "" {
		old, err := read(*file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		old.Passed += c.Passed
		old.Failed += c.Failed
		old.Skipped += c.Skipped
		raw, _ := json.Marshal(old)
		if err := os.WriteFile(*file, raw, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func read(file string) (counts, error) {
	var c counts
	raw, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) || len(raw) == 0 {
		return c, nil
	} else if err != nil {
		return c, err
	}
	return c, json.Unmarshal(raw, &c)
}

// summarize reads events from r and writes the summary to w. It reports
// the counts and whether anything failed.
func summarize(r io.Reader, w io.Writer) (counts, bool, error) {
	var c counts
	failed := false
	var failures []string
	held := map[string]*strings.Builder{} // output of running tests, by package and test
	heldIn := map[string]string{}         // the package of each held test
	passed := map[string]bool{}           // packages whose test binary passed
	shuffle := map[string]string{}        // each package's -test.shuffle line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line) // not an event: the go command's own words
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "" && e.Action == "output" && strings.HasPrefix(e.Output, "-test.shuffle "):
			shuffle[e.Package] = e.Output // shown if the package fails: the seed repeats the order
		case e.Test == "" && e.Action == "output":
			if strings.HasPrefix(e.Output, "FAIL") {
				io.WriteString(w, shuffle[e.Package])
			}
			if !quiet(e.Output) {
				io.WriteString(w, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			failed = true
		case e.Test == "" && e.Action == "pass":
			passed[e.Package] = true
		case e.Test == "":
		case e.Action == "output":
			b := held[key]
			if b == nil {
				b = &strings.Builder{}
				held[key] = b
				heldIn[key] = e.Package
			}
			if b.Len() < 1<<20 {
				b.WriteString(e.Output)
			}
		case e.Action == "pass":
			c.Passed++
			delete(held, key)
		case e.Action == "skip":
			c.Skipped++
			delete(held, key)
		case e.Action == "fail":
			c.Failed++
			failed = true
			failures = append(failures, e.Package+"."+e.Test)
			if b := held[key]; b != nil {
				io.WriteString(w, b.String()) // a subtest's first, then its parent's
			}
			delete(held, key)
		}
	}
	if err := sc.Err(); err != nil {
		return c, true, err
	}
	// A test still held in a package that did not pass ran when the binary
	// died (a panic in another goroutine, a time-out): its output says
	// where. (A benchmark has no pass event: in a package that passed, it
	// passed.)
	for key, b := range held {
		if passed[heldIn[key]] {
			continue
		}
		fmt.Fprintf(w, "== output of %s, running when its test binary ended:\n%s", key, b.String())
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "== %d failed:\n", len(failures))
		for _, f := range failures {
			fmt.Fprintf(w, "   %s\n", f)
		}
	}
	return c, failed, nil
}

// quiet reports whether a package's output line says only what its ok
// line says again.
func quiet(out string) bool {
	switch strings.TrimSpace(out) {
	case "PASS", "testing: warning: no tests to run":
		return true
	}
	for _, p := range []string{"goos: ", "goarch: ", "pkg: ", "cpu: "} { // a benchmark run's heading
		if strings.HasPrefix(out, p) {
			return true
		}
	}
	return false
}
