//go:build !perturbed

package backends

import "github.com/psdlearn/psdlearn/engine"

// registerTestBackends registers nothing without the perturbed tag.
func registerTestBackends(engine.Parts) {}
