package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile starts a CPU profile into the file named by the environment
// variable PSDLEARN_CPUPROFILE, if set, and returns the function that stops
// it. It is how the phase figures in docs/ were broken down further
// (`go tool pprof psdlearn FILE`).
func startProfile() (stop func(), err error) {
	path := os.Getenv("PSDLEARN_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PSDLEARN_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PSDLEARN_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
