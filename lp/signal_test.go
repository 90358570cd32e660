//go:build unix

package lp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/lp/lptest"
)

// TestSignalsReachGo: while native solves run, every SIGINT sent to the
// process reaches os/signal. CLP's initialSolve by default installs its own
// SIGINT handler for the length of the solve (through a process-wide static,
// which is not safe with concurrent models) and swallows the signal as a
// request to stop; the native solver turns that off, so a Go program keeps
// its signals and the solve is not cut short by a Ctrl-C meant for the program.
func TestSignalsReachGo(t *testing.T) {
	if !lp.HaveNative {
		t.Skip("no native LP solver in this build")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	p := lptest.MixedLP(rng, 200, 400)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT)
	defer signal.Stop(ch)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var solves int
	var solveErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			sol, err := lp.Solve(context.Background(), lp.Native, p)
			if err != nil {
				solveErr = err
				return
			}
			if sol.Status != lp.Optimal {
				solveErr = fmt.Errorf("status %v", sol.Status)
				return
			}
			solves++
		}
	}()
	const sent = 40
	lost := 0
	for i := 0; i < sent; i++ {
		time.Sleep(5 * time.Millisecond)
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
			lost++
		}
	}
	cancel()
	wg.Wait()
	if solveErr != nil {
		t.Errorf("a native solve failed while signals arrived: %v", solveErr)
	}
	if lost > 0 {
		t.Errorf("%d of %d SIGINTs did not reach os/signal (%d native solves ran meanwhile)", lost, sent, solves)
	}
	t.Logf("%d SIGINTs delivered during %d native solves", sent-lost, solves)
}
