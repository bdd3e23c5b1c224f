// Package benchmarks compares ctxfit with other Go libraries, side by side
// in one run. It is a separate module so that the libraries compared with
// stay out of ctxfit's own go.mod:
//
//	cd benchmarks && go test -run '^$' -bench . -benchmem
package benchmarks
