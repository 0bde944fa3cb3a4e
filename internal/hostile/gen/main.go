// Command gen writes one hostile trace dump of package hostile, streaming,
// so sizes of gigabytes cost no memory and, for the compressed shapes,
// little disk.
//
// Usage:
//
//	gen -shape invoke-chain -n 100000 -o chain.otlp.jsonl
//	gen -shape duplicate-lines -n 1000000 -raw -o - | mcptrace analyze -
//	gen -list
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mcptrace/mcptrace/internal/hostile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile gen:", err)
		os.Exit(1)
	}
}

func run() error {
	shape := flag.String("shape", "", "the shape to write (see -list)")
	n := flag.Int64("n", 0, "the size, in the shape's unit (spans, bytes or lines)")
	out := flag.String("o", "", "file to write; - for stdout")
	list := flag.Bool("list", false, "list the shapes with their unit and file extension")
	raw := flag.Bool("raw", false, "write a compressed shape uncompressed")
	flag.Parse()
	if *list {
		for _, s := range hostile.Shapes() {
			fmt.Printf("%s\t%s\t%s\n", s.Name, s.Unit, s.Ext)
		}
		return nil
	}
	if *shape == "" || *n <= 0 || *out == "" {
		return errors.New("give -shape, -n and -o (or -list)")
	}
	s, err := hostile.ShapeByName(*shape)
	if err != nil {
		return err
	}
	if *raw {
		s.Zstd = false
	}
	w := os.Stdout
	if *out != "-" {
		if w, err = os.Create(*out); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := hostile.WriteShape(bw, s, *n); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return w.Close()
}
