package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxfit/ctxfit/store"
)

func ExampleNewMemory() {
	ctx := context.Background()
	s := store.NewMemory(&store.MemoryOptions{
		MaxBytes: 1 << 20, // 1 MiB of snapshots
		MaxItems: 100,
	})
	defer s.Close()

	id := store.NewID()
	if err := s.Put(ctx, id, []byte(`[{"id":1},{"id":2}]`), 10*time.Minute); err != nil {
		fmt.Println(err)
		return
	}
	data, ok, err := s.Get(ctx, id)
	fmt.Println(string(data), ok, err)

	_, ok, err = s.Get(ctx, store.NewID())
	fmt.Println("unknown ID:", ok, err)

	err = s.Put(ctx, store.NewID(), make([]byte, 2<<20), time.Minute)
	fmt.Println("too large:", errors.Is(err, store.ErrTooLarge))
	// Output:
	// [{"id":1},{"id":2}] true <nil>
	// unknown ID: false <nil>
	// too large: true
}

func ExampleMemory_Get_expired() {
	// A fake clock: TTLs are measured with MemoryOptions.Now.
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	s := store.NewMemory(&store.MemoryOptions{Now: func() time.Time { return now }})
	defer s.Close()
	ctx := context.Background()

	_ = s.Put(ctx, "snapshot", []byte("page data"), time.Minute)
	now = now.Add(59 * time.Second)
	_, ok, _ := s.Get(ctx, "snapshot")
	fmt.Println("after 59s:", ok)

	// Reads do not extend the TTL.
	now = now.Add(time.Second)
	_, ok, _ = s.Get(ctx, "snapshot")
	fmt.Println("after 60s:", ok, "entries:", s.Len())
	// Output:
	// after 59s: true
	// after 60s: false entries: 0
}

func ExampleNewID() {
	id := store.NewID()
	fmt.Println(len(id), id != store.NewID())
	// Output: 22 true
}

func ExampleWithSubject() {
	// A store of 10 bytes shared by two subjects: each has a share of 5.
	s := store.NewMemory(&store.MemoryOptions{MaxBytes: 10})
	defer s.Close()
	alice := store.WithSubject(context.Background(), "alice")
	mallory := store.WithSubject(context.Background(), "mallory")

	_ = s.Put(alice, "a", []byte("alice"), time.Minute)
	var errs []error
	for i := range 5 { // a flood evicts mallory's own entries
		errs = append(errs, s.Put(mallory, fmt.Sprint("m", i), []byte("mallo"), time.Minute))
	}
	_, ok, _ := s.Get(context.Background(), "a")
	fmt.Println(errs, "alice's entry kept:", ok)

	// An entry that fits only by evicting alice, within her share, is
	// refused: answer without a snapshot.
	err := s.Put(mallory, "big", []byte("mallory"), time.Minute)
	fmt.Println("full:", errors.Is(err, store.ErrFull))
	// Output:
	// [<nil> <nil> <nil> <nil> <nil>] alice's entry kept: true
	// full: true
}

func ExampleMemory_GetRange() {
	ctx := context.Background()
	s := store.NewMemory(nil)
	defer s.Close()
	_ = s.Put(ctx, "id", []byte(`[{"id":1},{"id":2},{"id":3}]`), time.Minute)
	page, ok, _ := s.GetRange(ctx, "id", 10, 18)
	fmt.Println(string(page), ok)
	tail, ok, _ := s.GetRange(ctx, "id", 19, 1000) // clamped to the end
	fmt.Println(string(tail), ok)
	// Output:
	// {"id":2} true
	// {"id":3}] true
}
