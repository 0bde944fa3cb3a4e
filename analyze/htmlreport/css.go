package htmlreport

// CSS returns the HTML report's stylesheet (report.css):
// for pages another package draws in the report's look, light and dark
// (analyze/whatif's page), so the styles stay in one place.
func CSS() (string, error) {
	b, err := htmlAssets.ReadFile("report.css")
	return string(b), err
}
