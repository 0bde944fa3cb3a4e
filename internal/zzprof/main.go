package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/mcptrace/mcptrace/analyze"
)

func main() {
	f, _ := os.Create("/tmp/cpu.pprof")
	pprof.StartCPUProfile(f)
	t := time.Now()
	var r *analyze.Report
	var err error
	if os.Getenv("LOAD") != "" {
		idx, _, err2 := analyze.Load(context.Background(), os.Args[1:], analyze.LoadOptions{Read: analyze.ReadOptions{MaxMemory: 8 << 30}})
		err = err2
		t2 := time.Now()
		r, _ = analyze.Analyze(idx, analyze.Config{})
		fmt.Println("load", t2.Sub(t), "analyze", time.Since(t2))
	} else {
		r, _, err = analyze.AnalyzeStream(context.Background(), os.Args[1:], analyze.Config{}, analyze.LoadOptions{Read: analyze.ReadOptions{MaxMemory: 8 << 30}}, analyze.EngineOptions{})
	}
	pprof.StopCPUProfile()
	fmt.Println(time.Since(t), err, r.Spans)
}
