package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
)

// Report is a benchmark section that writes its own report: markdown for
// docs/, and JSON as the value itself.
type Report interface {
	Markdown(w io.Writer) error
}

// ReportOptions configures a report section.
type ReportOptions struct {
	// Backend runs psdlearn's solvers (nil: engine.Default()).
	Backend engine.Backend
	// Seed fixes the generated data and every random choice.
	Seed uint64
	// MaxSize skips problems with more points (0: no limit), for quick
	// runs; for BoostFig2Section, dimensions above it.
	MaxSize int
	// Runs, if positive, overrides the protocol's number of repeated runs
	// (Table2Section's 20): a quick check, not the protocol.
	Runs int
	// Case, if not empty, selects the section's problems whose name
	// contains it (case-insensitive): SDPSection's mvu, npkl and psdboost.
	// The other sections have no named problems and refuse it.
	Case string
	// PlotDir, if not empty, receives the section's figures.
	PlotDir string
	// Progress, if non-nil, receives an event per finished problem.
	Progress progress.Func
}

// SDPSection is SDPReference with the report options: the section of
// psdlearn against CSDP.
func SDPSection(ctx context.Context, o ReportOptions) (Report, error) {
	parts, err := sdpParts(o.Case)
	if err != nil {
		return nil, err
	}
	return SDPReference(ctx, SDPOptions{Backend: o.Backend, Seed: o.Seed, MaxSize: o.MaxSize, Parts: parts, PlotDir: o.PlotDir, Progress: o.Progress})
}

// sdpParts returns the SDP problems whose name contains c
// (case-insensitive); nil, all of them, for an empty c.
func sdpParts(c string) ([]string, error) {
	if c == "" {
		return nil, nil
	}
	var parts []string
	for _, p := range SDPParts {
		if strings.Contains(p, strings.ToLower(c)) {
			parts = append(parts, p)
		}
	}
	if parts == nil {
		return nil, fmt.Errorf("%w: no SDP problem matches %q (the problems: %s)", ErrCase, c, strings.Join(SDPParts, ", "))
	}
	return parts, nil
}

// SDPParts are the names of SDPSection's problems, in the order it runs
// them.
var SDPParts = []string{"mvu", "npkl", "psdboost"}

// ErrCase is returned by a section that cannot honour ReportOptions.Case.
var ErrCase = errors.New("bench: --case")

// noCase refuses a Case in the sections without named problems.
func noCase(o ReportOptions, section string) error {
	if o.Case != "" {
		return fmt.Errorf("%w: the %s section has no named problems to select", ErrCase, section)
	}
	return nil
}

// Table2Section is NPKLTable2 with its Figure 2 and the report options:
// SimpleNPKL's Table 2 and Figure 2 reproduced. MaxSize > 0 makes it a
// quick run: 3 runs per cell instead of 20, iris and the chessboard only,
// no Figure 2; Runs > 0 sets the runs per cell.
func Table2Section(ctx context.Context, o ReportOptions) (Report, error) {
	if err := noCase(o, "table2"); err != nil {
		return nil, err
	}
	opt := Table2Options{Backend: o.Backend, Seed: o.Seed, Figure2: true, PlotDir: o.PlotDir, Progress: o.Progress}
	if o.MaxSize > 0 {
		opt.Runs, opt.Data, opt.Figure2 = 3, []string{"iris", "chessboard"}, false
	}
	if o.Runs > 0 {
		opt.Runs = o.Runs
	}
	return NPKLTable2(ctx, opt)
}
