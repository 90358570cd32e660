package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack"
)

func init() {
	register(command{name: "version", summary: "print the version, the Go version and the compiled-in numerical backends", run: runVersion})
}

// version, when set at link time (go build -ldflags "-X main.version=v1.2.3",
// as the Dockerfile does from its VERSION argument), is the version printed;
// otherwise the module version recorded in the binary is.
var version string

// versionInfo is the JSON output of psdlearn version.
type versionInfo struct {
	Version  string   `json:"version"`
	Module   string   `json:"module"`
	Revision string   `json:"vcs_revision,omitempty"`
	Time     string   `json:"vcs_time,omitempty"`
	Modified bool     `json:"vcs_modified,omitempty"`
	Go       string   `json:"go"`
	Platform string   `json:"platform"`
	CGO      bool     `json:"cgo"`
	Backends []string `json:"backends"`
	Default  string   `json:"default_backend"`
	// BLASCore is OpenBLAS's kernel set, with its own choice when
	// psdlearn replaced a pre-AVX fallback (lapack.BLASCore).
	BLASCore string `json:"blas_core"`
}

// buildVersion reads the binary's build information.
func buildVersion() versionInfo {
	v := versionInfo{
		Version: "devel", Module: "github.com/psdlearn/psdlearn", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Backends: engine.Names(), Default: engine.Default().Name(),
		BLASCore: lapack.BLASCore().String(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			v.Module = bi.Main.Path
		}
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
			v.Version = mv
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "CGO_ENABLED":
				v.CGO = s.Value == "1"
			}
		}
	}
	if version != "" {
		v.Version = version
	}
	return v
}

func runVersion(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newBareFlagSet(env, "version")
	if err := parseFlags(fs, "version", args); err != nil {
		return err
	}
	v := buildVersion()
	if env.json {
		return emitJSON(env, v)
	}
	w := env.stdout
	fmt.Fprintf(w, "psdlearn %s (%s)\n", v.Version, v.Module)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = ", modified"
		}
		fmt.Fprintf(w, "  revision %s (%s%s)\n", v.Revision, v.Time, mod)
	}
	cgo := "without cgo"
	if v.CGO {
		cgo = "with cgo"
	}
	fmt.Fprintf(w, "  built with %s for %s, %s\n", v.Go, v.Platform, cgo)
	fmt.Fprintf(w, "  backends: %s (default %s)\n", strings.Join(v.Backends, ", "), v.Default)
	fmt.Fprintf(w, "  OpenBLAS kernels: %s\n", v.BLASCore)
	return nil
}
