package data

import (
	"runtime"
	"sync"
)

// parallelMinWork is the work (element operations) below which parallelRows
// runs on the calling goroutine.
const parallelMinWork = 1 << 18

// parallelRows calls f on contiguous ranges covering [0, n), on up to
// GOMAXPROCS goroutines when work is large enough. Callers write disjoint
// outputs per index, so results do not depend on the split.
func parallelRows(n, work int, f func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), n)
	if p <= 1 || work < parallelMinWork {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}
