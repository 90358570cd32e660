package sdpa

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
)

// ErrNoCSDP is returned by Run when the csdp binary is not installed
// (Debian and Ubuntu: apt-get install coinor-csdp).
var ErrNoCSDP = errors.New("sdpa: csdp is not installed (apt-get install coinor-csdp)")

// Binary is the name or path of the CSDP executable Run looks for.
const Binary = "csdp"

// CSDPPath returns the path of the csdp binary, or ErrNoCSDP.
func CSDPPath() (string, error) {
	path, err := exec.LookPath(Binary)
	if err != nil {
		return "", ErrNoCSDP
	}
	return path, nil
}

// Block is one block of a block-diagonal solution matrix: Sym for a
// symmetric block, Diag for a diagonal one.
type Block struct {
	Sym  *mat.SymDense
	Diag []float64
}

// Status is CSDP's return code.
type Status int

// CSDP's return codes (its documentation, "The Stand-alone Solver").
const (
	Success          Status = 0
	PrimalInfeasible Status = 1
	DualInfeasible   Status = 2
	PartialSuccess   Status = 3
	MaxIterations    Status = 4
	StuckPrimal      Status = 5
	StuckDual        Status = 6
	LackOfProgress   Status = 7
	SingularXZO      Status = 8
	NumericalTrouble Status = 9
)

var statusText = [...]string{
	"success", "primal infeasible", "dual infeasible", "partial success (near optimal)",
	"iteration limit", "stuck at the edge of primal feasibility", "stuck at the edge of dual feasibility",
	"lack of progress", "X, Z or O singular", "NaN or Inf",
}

// String describes the status.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusText) {
		return statusText[s]
	}
	return fmt.Sprintf("csdp status %d", int(s))
}

// Solution is what a CSDP run returns.
type Solution struct {
	// Status is CSDP's return code; only Success (and, with a looser
	// accuracy, PartialSuccess) carries a solution worth comparing.
	Status Status
	// Primal is ⟨C, X⟩ and Dual bᵀy, as CSDP prints them.
	Primal, Dual float64
	// Iterations is the number of interior-point iterations.
	Iterations int
	// Seconds is the wall time of the csdp process (reading the file
	// included), CPUSeconds its user and system time (all its threads),
	// and WriteSeconds the time to write the problem file.
	Seconds, CPUSeconds, WriteSeconds float64
	// Y is the dual solution, X the primal one (one Block per block of the
	// problem); Z, the dual slack, is kept only with Options.KeepZ.
	Y    []float64
	X, Z []Block
	// Log is CSDP's standard output.
	Log string
}

// Options configures Run.
type Options struct {
	// Params, if not nil, are written to param.csdp in the working
	// directory, which CSDP reads (keys such as "axtol", "objtol",
	// "maxiter", "printlevel").
	Params map[string]string
	// KeepZ keeps the dual slack Z in the solution.
	KeepZ bool
	// NoSolution skips reading the solution file (Y, X and Z stay nil):
	// for large problems whose objectives are all that is wanted.
	NoSolution bool
	// Dir, if not empty, is the directory for the problem and solution
	// files, which are then kept; by default a temporary one is removed.
	Dir string
	// Env holds environment entries ("KEY=value") added to the csdp
	// process's, which otherwise inherits this process's environment.
	Env []string
}

// Run writes p to a file, solves it with CSDP and reads back the
// objectives and the solution. It returns ErrNoCSDP when csdp is not
// installed, and an error when the process could not run or its output
// could not be read; a solve that ended without success is reported in
// Solution.Status, not as an error. Cancelling ctx kills the process.
func Run(ctx context.Context, p *Problem, opt Options) (*Solution, error) {
	bin, err := CSDPPath()
	if err != nil {
		return nil, err
	}
	dir := opt.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "psdlearn-csdp-"); err != nil {
			return nil, fmt.Errorf("sdpa: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	in, out := filepath.Join(dir, "problem.dat-s"), filepath.Join(dir, "problem.sol")
	t0 := time.Now()
	if err := writeFile(in, p); err != nil {
		return nil, err
	}
	writeSeconds := time.Since(t0).Seconds()
	if opt.Params != nil {
		keys := make([]string, 0, len(opt.Params))
		for k := range opt.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%s\n", k, opt.Params[k])
		}
		if err := os.WriteFile(filepath.Join(dir, "param.csdp"), []byte(b.String()), 0o644); err != nil {
			return nil, fmt.Errorf("sdpa: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, bin, in, out)
	cmd.Dir = dir
	if len(opt.Env) > 0 {
		cmd.Env = append(os.Environ(), opt.Env...)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stdout
	t1 := time.Now()
	runErr := cmd.Run()
	sol := &Solution{Status: Success, Seconds: time.Since(t1).Seconds(), WriteSeconds: writeSeconds, Log: stdout.String()}
	if ps := cmd.ProcessState; ps != nil {
		sol.CPUSeconds = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sdpa: csdp: %w", err)
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) || ee.ExitCode() < 0 {
			return nil, fmt.Errorf("sdpa: csdp: %w", runErr)
		}
		sol.Status = Status(ee.ExitCode())
	}
	parseLog(sol)
	if math.IsNaN(sol.Primal) || math.IsNaN(sol.Dual) {
		return sol, fmt.Errorf("sdpa: csdp printed no objective values (status %v): %s", sol.Status, lastLine(sol.Log))
	}
	if opt.NoSolution || (sol.Status != Success && sol.Status != PartialSuccess) {
		return sol, nil
	}
	f, err := os.Open(out)
	if err != nil {
		return sol, fmt.Errorf("sdpa: csdp solution: %w", err)
	}
	defer f.Close()
	if err := readSolution(f, p, sol, opt.KeepZ); err != nil {
		return sol, err
	}
	return sol, nil
}

func writeFile(path string, p *Problem) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sdpa: %w", err)
	}
	if err := Write(f, p); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sdpa: %w", err)
	}
	return nil
}

// parseLog reads the objectives and the iteration count from CSDP's output.
func parseLog(sol *Solution) {
	sol.Primal, sol.Dual = math.NaN(), math.NaN()
	for _, l := range strings.Split(sol.Log, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Primal objective value:"):
			sol.Primal = lastFloat(l)
		case strings.HasPrefix(l, "Dual objective value:"):
			sol.Dual = lastFloat(l)
		case strings.HasPrefix(l, "Iter:"):
			if f := strings.Fields(l); len(f) > 1 {
				if v, err := strconv.Atoi(f[1]); err == nil {
					sol.Iterations = v
				}
			}
		}
	}
}

func lastFloat(l string) float64 {
	f := strings.Fields(l)
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[len(f)-1], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// newBlocks allocates the blocks of a solution matrix of p.
func newBlocks(p *Problem) []Block {
	bs := make([]Block, len(p.Blocks))
	for k := range p.Blocks {
		dim, diag := p.blockDim(k)
		if diag {
			bs[k].Diag = make([]float64, dim)
		} else {
			bs[k].Sym = mat.NewSymDense(dim, nil)
		}
	}
	return bs
}

// readSolution parses CSDP's solution file: y on the first line, then
// entries "1 block i j value" of Z and "2 block i j value" of X.
func readSolution(r io.Reader, p *Problem, sol *Solution, keepZ bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<28)
	sc.Split(bufio.ScanWords)
	num := func() (float64, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return 0, err
			}
			return 0, io.ErrUnexpectedEOF
		}
		return strconv.ParseFloat(sc.Text(), 64)
	}
	sol.Y = make([]float64, len(p.B))
	for i := range sol.Y {
		v, err := num()
		if err != nil {
			return fmt.Errorf("sdpa: csdp solution: y[%d]: %w", i+1, err)
		}
		sol.Y[i] = v
	}
	sol.X = newBlocks(p)
	if keepZ {
		sol.Z = newBlocks(p)
	}
	var rec [5]float64
	for {
		for t := range rec {
			v, err := num()
			if err == io.ErrUnexpectedEOF && t == 0 {
				return nil
			}
			if err != nil {
				return fmt.Errorf("sdpa: csdp solution: %w", err)
			}
			rec[t] = v
		}
		which, blk, i, j := int(rec[0]), int(rec[1])-1, int(rec[2])-1, int(rec[3])-1
		if (which != 1 && which != 2) || blk < 0 || blk >= len(p.Blocks) {
			return fmt.Errorf("%w: csdp solution: entry %v", ErrFormat, rec)
		}
		dim, diag := p.blockDim(blk)
		if i < 0 || j < 0 || i >= dim || j >= dim || (diag && i != j) {
			return fmt.Errorf("%w: csdp solution: entry %v outside its block", ErrFormat, rec)
		}
		var bs []Block
		if which == 2 {
			bs = sol.X
		} else if keepZ {
			bs = sol.Z
		} else {
			continue
		}
		if diag {
			bs[blk].Diag[i] = rec[4]
		} else {
			bs[blk].Sym.SetSym(i, j, rec[4])
		}
	}
}
