package engine

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// EnvBackend is the environment variable that overrides Default.
const EnvBackend = "PSDLEARN_BACKEND"

var (
	regMu    sync.RWMutex
	registry = map[string]Backend{}
)

// Register adds b under b.Name(), replacing any backend of that name.
func Register(b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[b.Name()] = b
}

// Get returns the backend called name. The empty name means Default().
func Get(name string) (Backend, error) {
	if name == "" {
		return Default(), nil
	}
	regMu.RLock()
	defer regMu.RUnlock()
	b, ok := registry[strings.ToLower(name)]
	if !ok {
		if len(registry) == 0 {
			return nil, fmt.Errorf("engine: unknown backend %q: %w", name, ErrNoBackend)
		}
		return nil, fmt.Errorf("engine: unknown backend %q (available: %s)", name, strings.Join(namesLocked(), ", "))
	}
	return b, nil
}

// Names returns the registered backend names, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return namesLocked()
}

// All returns the registered backends in the order of Names ("go" before
// "native"): the set a test runs on to compare backends.
func All() []Backend {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Backend, 0, len(registry))
	for _, n := range namesLocked() {
		out = append(out, registry[n])
	}
	return out
}

func namesLocked() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Default returns the backend named by $PSDLEARN_BACKEND if it is set and
// registered, else "native" when compiled in, else "go".
func Default() Backend {
	if name := os.Getenv(EnvBackend); name != "" {
		if b, err := Get(name); err == nil {
			return b
		}
	}
	regMu.RLock()
	defer regMu.RUnlock()
	if b, ok := registry["native"]; ok {
		return b
	}
	if b, ok := registry["go"]; ok {
		return b
	}
	return none{}
}

// Or returns b, or Default() if b is nil. Algorithms call it on their Backend argument.
func Or(b Backend) Backend {
	if b == nil {
		return Default()
	}
	return b
}
