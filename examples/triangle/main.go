package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/framescope/framescope/internal/cmd/demo"
)

func main() {
	cfg, err := demo.ParseFlags("triangle", os.Args[1:], os.Stderr, demo.DemoFlags)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(2)
	}
	if err := demo.Run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "triangle:", err)
		os.Exit(1)
	}
}
