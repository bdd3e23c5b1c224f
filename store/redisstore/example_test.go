package redisstore_test

import (
	"fmt"
	"log"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

func ExampleFromConfig() {
	cfg := ctxfit.Config{} // RedisURL from CTXFIT_REDIS_URL, e.g. "redis://localhost:6379/0"
	st, err := redisstore.FromConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	if st != nil {
		defer st.Close() // after the Guard
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	fmt.Println("shared store:", st != nil)
	// Output: shared store: false
}
