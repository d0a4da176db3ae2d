package main

import "runtime"

// runtimeGOMAXPROCS reports the number of OS threads running Go code.
func runtimeGOMAXPROCS() int { return runtime.GOMAXPROCS(0) }
