// Package cli holds redlockctl's commands, one file per command, on cobra.
// cmd/redlockctl/main.go only calls Execute.
package cli
