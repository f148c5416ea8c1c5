package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionJSON is version's -o json output.
type versionJSON struct {
	Version   string `json:"version"`    // module version, "(devel)" for a source build
	Revision  string `json:"revision"`   // VCS revision when built from a checkout, else ""
	GoVersion string `json:"go_version"` // the Go toolchain
}

func (a *app) newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print redlockctl's version",
		Example: "  redlockctl version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionJSON{Version: "(unknown)", GoVersion: runtime.Version()}
			if bi, ok := debug.ReadBuildInfo(); ok {
				v.Version = bi.Main.Version
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						v.Revision = s.Value
					}
				}
			}
			if a.g.json() {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			rev := ""
			if v.Revision != "" {
				rev = " " + v.Revision
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "redlockctl %s%s (%s)\n", v.Version, rev, v.GoVersion)
			return err
		},
	}
}
