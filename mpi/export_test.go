package mpi

// ResetWorld forgets Open and Close so that a test of the pure-Go build can
// open and close a fresh world; the returned function restores the state.
func ResetWorld() (restore func()) {
	world.mu.Lock()
	opened, comm, err, wasClosed := world.opened, world.comm, world.err, closed.Load()
	world.opened, world.comm, world.err = false, nil, nil
	closed.Store(false)
	world.mu.Unlock()
	return func() {
		world.mu.Lock()
		world.opened, world.comm, world.err = opened, comm, err
		closed.Store(wasClosed)
		world.mu.Unlock()
	}
}
