package mpi

import (
	"errors"
	"strings"
	"testing"
)

func TestLaunched(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		multi    bool
		evidence string
	}{
		{nil, false, ""},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0", "PMIX_RANK": "0"}, false, ""},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}, true, "OMPI_COMM_WORLD_SIZE=2"},
		{map[string]string{"PMI_SIZE": "4", "PMI_RANK": "3"}, true, "PMI_SIZE=4"},
		{map[string]string{"PMIX_RANK": "1"}, true, "PMIX_RANK=1"},
		{map[string]string{"MV2_COMM_WORLD_SIZE": "8"}, true, "MV2_COMM_WORLD_SIZE=8"},
		{map[string]string{"PMI_SIZE": "junk"}, false, ""},
	} {
		multi, evidence := launched(func(k string) string { return tc.env[k] })
		if multi != tc.multi || evidence != tc.evidence {
			t.Errorf("%v: launched = %v, %q; want %v, %q", tc.env, multi, evidence, tc.multi, tc.evidence)
		}
	}
}

// TestPureGoLaunchedByMpirun checks the pure-Go build's refusal to run as
// one of several processes, and that its message says how to build with MPI.
func TestPureGoLaunchedByMpirun(t *testing.T) {
	if HaveNative {
		t.Skip("native build: Open calls MPI")
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	c, err := openWorld()
	if c != nil || !errors.Is(err, ErrNoMPISupport) {
		t.Fatalf("openWorld under mpirun -np 2 = %v, %v; want ErrNoMPISupport", c, err)
	}
	for _, want := range []string{"mpi: open: ", "OMPI_COMM_WORLD_SIZE=2", "go build -tags mpi"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	if c, err := openWorld(); err != nil || c.Size() != 1 {
		t.Errorf("openWorld under mpirun -np 1 = %v, %v; want the single-process world", c, err)
	}
}
