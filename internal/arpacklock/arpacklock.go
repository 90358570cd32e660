// Package arpacklock holds the one lock around every use of arpack-ng in
// the process. The serial routines (dsaupd, package arpack) and the
// parallel ones (pdsaupd, package parpack) keep Fortran SAVE state and share
// arpack-ng's common blocks (the /timing/ and /debug/ counters every
// routine updates), so a solve of either kind must not overlap another.
package arpacklock

import "sync"

// Mu is held for the whole of a reverse-communication sequence
// (…saupd until ido = 99, then …seupd).
var Mu sync.Mutex
