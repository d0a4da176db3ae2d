package main

import (
	"os"

	"github.com/calendar/eventcal/app/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
