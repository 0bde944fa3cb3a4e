package htmlreport

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cvdSimulations are the Machado, Oliveira and Fernandes (2009) matrices
// for full protanopia, deuteranopia and tritanopia, applied to linear RGB:
// how a colour looks to a reader without one kind of cone.
var cvdSimulations = map[string][3][3]float64{
	"normal vision": {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	"protanopia":    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	"deuteranopia":  {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	"tritanopia":    {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
}

// minDeltaE is the CIE76 colour difference two marks that mean different
// things must keep in every simulation: 20 reads as a different colour at
// a glance, not a shade of the same one.
const minDeltaE = 20

// TestTimelineColoursStayApartForColourBlindReaders checks the pairs of
// report.css's colours a reader must tell apart on one row of the session
// timeline: an unexplained miss (the regression) against a failed
// handshake, and a handshake against a failed one, in the light and the
// dark scheme, for normal vision and each full dichromacy.
func TestTimelineColoursStayApartForColourBlindReaders(t *testing.T) {
	css, err := CSS() // the embedded report.css, as the page draws it
	if err != nil {
		t.Fatal(err)
	}
	schemes := schemeColours(t, css)
	pairs := [][2]string{{"unexplained", "handshake-failed"}, {"handshake", "handshake-failed"}}
	for scheme, colours := range schemes {
		for _, p := range pairs {
			a, b := colours[p[0]], colours[p[1]]
			if a == "" || b == "" {
				t.Fatalf("%s scheme: no --%s or --%s in report.css", scheme, p[0], p[1])
			}
			for sim, m := range cvdSimulations {
				if d := deltaE(labOf(simulate(m, linearRGB(t, a))), labOf(simulate(m, linearRGB(t, b)))); d < minDeltaE {
					t.Errorf("%s scheme, %s: --%s %s and --%s %s are %.1f apart (CIE76), want at least %d", scheme, sim, p[0], a, p[1], b, d, minDeltaE)
				}
			}
		}
	}
}

// cssColour is one custom property holding a hex colour.
var cssColour = regexp.MustCompile(`--([a-z_-]+):\s*(#[0-9a-fA-F]{6})\b`)

// schemeColours reads the light scheme's colours (the first :root block)
// and the dark scheme's (the :root block under prefers-color-scheme: dark,
// over the light ones).
func schemeColours(t *testing.T, css string) map[string]map[string]string {
	t.Helper()
	dark := strings.Index(css, "prefers-color-scheme: dark")
	if dark < 0 {
		t.Fatal("report.css has no dark scheme")
	}
	read := func(block string, into map[string]string) {
		for _, m := range cssColour.FindAllStringSubmatch(block, -1) {
			into[m[1]] = m[2]
		}
	}
	lightEnd := strings.Index(css, "}")
	light := map[string]string{}
	read(css[:lightEnd], light)
	darkC := map[string]string{}
	for k, v := range light {
		darkC[k] = v
	}
	rest := css[dark:]
	read(rest[:strings.Index(rest, "}")], darkC)
	return map[string]map[string]string{"light": light, "dark": darkC}
}

func linearRGB(t *testing.T, hex string) [3]float64 {
	t.Helper()
	var c [3]float64
	for i := range c {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %s: %v", hex, err)
		}
		s := float64(v) / 255
		if s <= 0.04045 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return c
}

func simulate(m [3][3]float64, c [3]float64) [3]float64 {
	var o [3]float64
	for i := range o {
		o[i] = min(1, max(0, m[i][0]*c[0]+m[i][1]*c[1]+m[i][2]*c[2]))
	}
	return o
}

// labOf converts linear sRGB to CIE L*a*b* (D65).
func labOf(c [3]float64) [3]float64 {
	x := (0.4124*c[0] + 0.3576*c[1] + 0.1805*c[2]) / 0.95047
	y := 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
	z := (0.0193*c[0] + 0.1192*c[1] + 0.9505*c[2]) / 1.08883
	f := func(v float64) float64 {
		if v > 216.0/24389 {
			return math.Cbrt(v)
		}
		return (24389.0/27*v + 16) / 116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

func deltaE(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}
