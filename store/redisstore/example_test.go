package redisstore_test

import (
	"fmt"
	"log"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

func ExampleFromURL() {
	cfg := ctxfit.Config{} // RedisURL from CTXFIT_REDIS_URL, e.g. "redis://localhost:6379/0"
	st, err := redisstore.FromURL(cfg.RedisURL, &redisstore.Options{
		Timeout:         time.Duration(cfg.StoreTimeout), // zero: 500 ms
		SubjectMaxBytes: 16 << 20,                        // each subject's live snapshots
	})
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
