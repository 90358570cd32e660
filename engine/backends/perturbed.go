//go:build perturbed

package backends

import (
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/perturbed"
)

// registerTestBackends registers "perturbed": base with every dense
// result moved at the level of rounding.
func registerTestBackends(base engine.Parts) {
	register("perturbed", perturbed.Parts(base))
}
