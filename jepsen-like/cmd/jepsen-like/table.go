package main

import "github.com/spf13/cobra"

func tableCmd() *cobra.Command {
	return &cobra.Command{Use: "table", Hidden: true}
}
