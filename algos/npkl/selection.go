package npkl

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/sparse"
)

// Selection chooses which of the sampled constraints SimpleNPKL learns from.
type Selection int

const (
	// AllConstraints uses every sampled constraint.
	AllConstraints Selection = iota
	// ActiveSelection keeps the constraints of the most uncertain points by
	// the margin criterion of a linear-loss kernel learned on all constraints.
	ActiveSelection
	// RandomSelection keeps a random subset of the same size.
	RandomSelection
)

// String returns the CLI name of the selection.
func (s Selection) String() string {
	switch s {
	case AllConstraints:
		return "all"
	case ActiveSelection:
		return "active"
	case RandomSelection:
		return "random"
	}
	return fmt.Sprintf("Selection(%d)", int(s))
}

// ParseSelection parses "all", "active" or "random".
func ParseSelection(s string) (Selection, error) {
	switch s {
	case "", "all":
		return AllConstraints, nil
	case "active":
		return ActiveSelection, nil
	case "random":
		return RandomSelection, nil
	}
	return 0, fmt.Errorf("npkl: unknown selection %q (want all, active or random)", s)
}

// SelectConstraints returns the constraints of pairs that sel keeps: all
// of them, or a share fraction of them (at least one) chosen by
// SelectActive on the linear-loss kernel learned with opt from all of them
// (on the Laplacian lap), or by SelectRandom seeded with opt.Seed.
func SelectConstraints(ctx context.Context, lap *sparse.CSR, pairs *constraints.Pairs, opt Options, sel Selection, fraction float64) (*constraints.Pairs, error) {
	if sel == AllConstraints {
		return pairs, nil
	}
	if !(fraction > 0 && fraction <= 1) {
		return nil, fmt.Errorf("npkl: selecting constraints: fraction %v outside (0, 1]", fraction)
	}
	target := max(1, int(math.Round(fraction*float64(pairs.Len()))))
	switch sel {
	case ActiveSelection:
		base := opt
		base.Loss, base.Progress = Linear, nil
		res, err := Learn(ctx, lap, pairs, base)
		if err != nil {
			return nil, fmt.Errorf("active selection: %w", err)
		}
		return SelectActive(res, pairs, target)
	case RandomSelection:
		return SelectRandom(pairs, target, opt.Seed)
	}
	return nil, fmt.Errorf("npkl: unknown selection %v", sel)
}
