package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Certificate records how far the solver that learned a model got: whether
// it reached its certificate, the duality gap it ended with and the
// tolerance that gap was held to. Model files written before certificates
// were recorded have none (Model.Certificate is nil).
type Certificate struct {
	// Converged reports that the solve reached its certificate (see
	// train.Output.Converged); false for an iteration cap, a stall or an
	// interrupted run.
	Converged bool
	// Gap is the final relative duality gap and Tolerance the gap asked
	// for; NaN when the algorithm has no duality certificate.
	Gap, Tolerance float64
	// Reason says why the solve stopped.
	Reason string
	// Interrupted reports that the run was cancelled (Ctrl-C) and the model
	// is the best found before it.
	Interrupted bool
	// Warnings are the run's warnings (one line each).
	Warnings []string
}

// certificateJSON is the file form of a Certificate: NaN is written as null.
type certificateJSON struct {
	Converged   bool     `json:"converged"`
	Gap         *float64 `json:"gap"`
	Tolerance   *float64 `json:"tolerance"`
	Reason      string   `json:"reason,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func valueOr(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes c with NaN gap or tolerance as null.
func (c Certificate) MarshalJSON() ([]byte, error) {
	return json.Marshal(certificateJSON{
		Converged: c.Converged, Gap: finitePtr(c.Gap), Tolerance: finitePtr(c.Tolerance),
		Reason: c.Reason, Interrupted: c.Interrupted, Warnings: c.Warnings,
	})
}

// UnmarshalJSON reads c, null gap or tolerance as NaN, and rejects a
// negative tolerance and a converged interrupted run.
func (c *Certificate) UnmarshalJSON(b []byte) error {
	var f certificateJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	if f.Tolerance != nil && !(*f.Tolerance >= 0) {
		return fmt.Errorf("%w: certificate tolerance %g, want ≥ 0", ErrInvalid, *f.Tolerance)
	}
	if f.Converged && f.Interrupted {
		return fmt.Errorf("%w: certificate of an interrupted run says converged", ErrInvalid)
	}
	*c = Certificate{Converged: f.Converged, Gap: valueOr(f.Gap), Tolerance: valueOr(f.Tolerance),
		Reason: f.Reason, Interrupted: f.Interrupted, Warnings: f.Warnings}
	return nil
}
