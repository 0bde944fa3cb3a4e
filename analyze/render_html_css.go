package analyze

// ReportCSS returns the HTML report's stylesheet (htmlreport/report.css):
// for pages another package draws in the report's look, light and dark
// (analyze/whatif's page), so the styles stay in one place.
func ReportCSS() (string, error) {
	b, err := htmlAssets.ReadFile("htmlreport/report.css")
	return string(b), err
}
