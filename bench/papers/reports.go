package papers

import (
	"context"

	"github.com/psdlearn/psdlearn/bench"
)

// The report sections, measured by package bench (which does not import
// this package): psdlearn's SDP solvers against the interior-point solver
// CSDP, and SimpleNPKL's Table 2 with its Figure 2. Their own suites,
// `psdlearn bench --suite sdp` and `--suite table2`, run them alone; their
// JSON outputs merge into the page like the suite's own.
func init() {
	Register(Section{Key: "sdp", Title: "psdlearn against CSDP", Order: 2,
		RunReport: runSDP, ReadReport: readSDP, MergeReports: mergeSDP})
	Register(Section{Key: "table2", Title: "SimpleNPKL, Table 2 and Figure 2", Order: 3,
		RunReport: runTable2, ReadReport: readTable2, MergeReports: mergeTable2})
}

// reportSeed is the seed of the report sections, their own suites'
// default.
const reportSeed = 1

func reportOptions(opt Options) bench.ReportOptions {
	return bench.ReportOptions{Backend: opt.Backend, Seed: reportSeed, MaxSize: opt.MaxSize, PlotDir: opt.PlotDir, Progress: opt.Progress}
}

func runSDP(ctx context.Context, opt Options) (Report, error) {
	return bench.SDPSection(ctx, reportOptions(opt))
}

func readSDP(data []byte) (Report, error) { return bench.ReadSDPReport(data) }

func mergeSDP(reports ...Report) Report {
	list := make([]*bench.SDPReport, len(reports))
	for i, r := range reports {
		list[i] = r.(*bench.SDPReport)
	}
	return bench.MergeSDPReports(list...)
}

// runTable2 runs Table 2 with the suite's runs per cell (0: the paper's
// 20).
func runTable2(ctx context.Context, opt Options) (Report, error) {
	o := reportOptions(opt)
	o.Runs = opt.Runs
	return bench.Table2Section(ctx, o)
}

func readTable2(data []byte) (Report, error) { return bench.ReadTable2Report(data) }

func mergeTable2(reports ...Report) Report {
	list := make([]*bench.Table2Report, len(reports))
	for i, r := range reports {
		list[i] = r.(*bench.Table2Report)
	}
	return bench.MergeTable2Reports(list...)
}
