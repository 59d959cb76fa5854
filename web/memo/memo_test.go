package memo

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGetBuildsOnceForConcurrentCallers(t *testing.T) {
	c := New[string, int](4)
	var builds atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 20)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := c.Get("k", func() (int, error) {
				builds.Add(1)
				<-release
				return 42, nil
			})
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	// Every caller is waiting on the one build (or has not asked yet).
	for deadline := time.Now().Add(5 * time.Second); builds.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no build started")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("builds: %d, want 1", n)
	}
	for i, v := range got {
		if v != 42 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
	if _, hit, _ := c.Get("k", func() (int, error) { return 0, errors.New("rebuilt") }); !hit {
		t.Error("a kept value was built again")
	}
}

// A build that panics must not leave its waiters (every later stream that
// asks for the same chart) blocked for ever.
func TestPanickingBuildReleasesWaiters(t *testing.T) {
	c := New[string, int](4)
	started, release := make(chan struct{}), make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		c.Get("k", func() (int, error) {
			close(started)
			<-release
			panic("chart build bug")
		})
	}()
	<-started
	waited := make(chan error, 1)
	go func() {
		_, _, err := c.Get("k", func() (int, error) { return 7, nil })
		waited <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the waiter join the build (it passes either way)
	close(release)
	var pe *PanicError
	if p := <-panicked; p == nil || !errors.As(p.(error), &pe) || pe.Value != "chart build bug" {
		t.Fatalf("the builder's panic: %v", p)
	}
	select {
	case err := <-waited:
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter on a panicked build is still blocked")
	}
	// Not kept: the next caller builds.
	if v, hit, err := c.Get("k", func() (int, error) { return 9, nil }); err != nil || hit || v != 9 {
		t.Fatalf("after the panic: %d %v %v", v, hit, err)
	}
}

func TestFailedBuildIsNotKept(t *testing.T) {
	c := New[string, int](4)
	if _, _, err := c.Get("k", func() (int, error) { return 0, errors.New("bad") }); err == nil {
		t.Fatal("no error")
	}
	if v, hit, _ := c.Get("k", func() (int, error) { return 3, nil }); hit || v != 3 {
		t.Fatalf("got %d hit=%v", v, hit)
	}
}

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name            string
		max, maxCost    int
		costs           []int
		wantLen, wantIn int // values kept; the oldest key still kept
	}{
		{"count", 3, 0, []int{1, 1, 1, 1, 1}, 3, 2},
		{"cost", 10, 10, []int{4, 4, 4, 4}, 2, 2},
		{"one value over the cost is still kept", 10, 10, []int{50}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New[int, int](tc.max)
			if tc.maxCost > 0 {
				c.WithCost(tc.maxCost, func(v int) int { return v })
			}
			for i, cost := range tc.costs {
				c.Get(i, func() (int, error) { return cost, nil })
			}
			if c.Len() != tc.wantLen {
				t.Errorf("kept %d, want %d", c.Len(), tc.wantLen)
			}
			if _, ok := c.Peek(tc.wantIn); !ok {
				t.Errorf("key %d forgotten", tc.wantIn)
			}
			if tc.wantIn > 0 {
				if _, ok := c.Peek(tc.wantIn - 1); ok {
					t.Errorf("key %d kept", tc.wantIn-1)
				}
			}
		})
	}
}

func TestRecentUseKeepsAValue(t *testing.T) {
	c := New[int, int](2)
	c.Put(1, 1)
	c.Put(2, 2)
	c.Peek(1) // 1 is now the most recent
	c.Put(3, 3)
	if _, ok := c.Peek(1); !ok {
		t.Error("the recently used value was forgotten")
	}
	if _, ok := c.Peek(2); ok {
		t.Error("the least recently used value was kept")
	}
}
