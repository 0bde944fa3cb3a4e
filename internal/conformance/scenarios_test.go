package conformance

// row is what the test does with one client scenario of the pinned runner.
// A row with neither knownFailure nor skip must pass.
type row struct {
	name string
	// knownFailure, if set, says why the Go SDK the pool is built on (v1.8.0)
	// cannot pass the scenario yet. The row runs under the runner's
	// expected-failures baseline and must fail: the day it passes, the test
	// turns red, and the row becomes a pass.
	knownFailure string
	// skip, if set, says why the scenario cannot apply to a session pool.
	// The row does not run.
	skip string
	// allow lists the checks that may end other than SUCCESS (or INFO, a
	// record of the traffic and never a verdict), and why. Each must be
	// seen, or the allowance is stale.
	allow []allowance
}

// allowance lets one check of one run end with status.
type allowance struct {
	revision string // the run's revision
	id       string // the check's id
	status   string // the status allowed: WARNING or SKIPPED
	about    string // a substring of the check's description that picks it
	why      string
}

// skillsHost is why the SEP-2640 skills scenarios cannot apply.
const skillsHost = "SEP-2640 (the skills extension, off the spec timeline) judges a host that lists skills (skills/list) " +
	"and reads, verifies or refuses their files; a session pool lends sessions and never lists or loads a skill, and the " +
	"Go SDK v1.8.0 has no skills client, so the runner's one check ends SKIPPED (\"the client never called skills/list\"), " +
	"which is not a pass"

// noDPoP is why the DPoP scenarios fail.
const noDPoP = "SEP-1932 DPoP sender-constrained tokens: the Go SDK v1.8.0 has no DPoP client (no proof JWT on the token " +
	"request or the resource request, Bearer scheme only); the client runs the authorization-code flow and the DPoP " +
	"checks fail. Listed in go-sdk's own conformance/baseline.yml"

// table holds one row per client scenario of @modelcontextprotocol/conformance
// 0.2.0-alpha.12, in the order `conformance list` prints them.
var table = []row{
	{name: "initialize"},
	{name: "tools_call"},
	{name: "elicitation-sep1034-client-defaults"},
	{name: "sse-retry"},
	{name: "request-metadata"},
	{name: "auth/metadata-default"},
	{name: "auth/metadata-var1"},
	{name: "auth/metadata-var2"},
	{name: "auth/metadata-var3"},
	{name: "auth/basic-cimd"},
	{name: "auth/scope-from-www-authenticate"},
	{name: "auth/scope-from-scopes-supported"},
	{name: "auth/scope-omitted-when-undefined"},
	{name: "auth/scope-step-up"},
	{name: "auth/scope-retry-limit"},
	{name: "auth/token-endpoint-auth-basic"},
	{name: "auth/token-endpoint-auth-post"},
	{name: "auth/token-endpoint-auth-none"},
	{name: "auth/pre-registration"},
	{name: "auth/2025-03-26-oauth-metadata-backcompat"},
	{name: "auth/2025-03-26-oauth-endpoint-fallback"},
	{name: "auth/resource-mismatch"},
	{name: "auth/offline-access-scope"},
	{name: "auth/offline-access-not-supported"},
	{name: "auth/authorization-server-migration"},
	{name: "auth/iss-supported"},
	{name: "auth/iss-not-advertised"},
	{name: "auth/iss-supported-missing"},
	{name: "auth/iss-wrong-issuer"},
	{name: "auth/iss-unexpected"},
	{name: "auth/iss-normalized"},
	{name: "auth/metadata-issuer-mismatch"},
	{name: "auth/client-credentials-jwt", knownFailure: "private_key_jwt client authentication (an RFC 7523 assertion signed " +
		"with the context's ES256 key): the Go SDK v1.8.0's extauth.ClientCredentialsHandler takes a client secret only " +
		"(ClientSecretAuth is required), so the client has no handler to give the pool. Listed in go-sdk's baseline.yml"},
	{name: "auth/client-credentials-basic"},
	{name: "auth/enterprise-managed-authorization", knownFailure: "SEP-990: the Go SDK v1.8.0's extauth.EnterpriseHandler " +
		"(wired in client/oauth.go) stops at the runner's IdP, whose metadata advertises no PKCE (the SDK's discovery " +
		"requires it: \"does not implement PKCE\"), and its JWT-bearer grant sends the client credentials in the body where " +
		"the scenario requires client_secret_basic. Listed in go-sdk's baseline.yml"},
	{name: "auth/dpop", knownFailure: noDPoP},
	{name: "auth/dpop-nonce", knownFailure: noDPoP},
	{name: "auth/wif-jwt-bearer", knownFailure: "SEP-1933 workload identity federation (an RFC 7523 JWT-bearer grant " +
		"with the workload's JWT): the Go SDK v1.8.0 has no such OAuth client, so the client has no handler to give the " +
		"pool. Listed in go-sdk's baseline.yml"},
	{name: "sep-2322-client-request-state"},
	{name: "http-standard-headers", allow: []allowance{
		{revision: "2026-07-28", id: "sep-2243-client-includes-standard-headers", status: "SKIPPED", about: "on initialize request",
			why: "2026-07-28 has no initialize: the pool's handshake is server/discover, so there is no initialize request to carry the header"},
		{revision: "2026-07-28", id: "sep-2243-client-includes-standard-headers", status: "SKIPPED", about: "on notifications/initialized request",
			why: "2026-07-28 has no notifications/initialized either"},
	}},
	{name: "http-custom-headers"},
	{name: "http-invalid-tool-headers"},
	{name: "json-schema-ref-no-deref"},
	{name: "json-schema-2020-12-preservation"},
	{name: "sep-2640-client-no-prefetch", skip: skillsHost},
	{name: "sep-2640-client-verify-digest", skip: skillsHost},
	{name: "sep-2640-client-verify-size", skip: skillsHost},
	{name: "sep-2640-client-verify-frontmatter", skip: skillsHost},
}

// notShipped names client scenarios of the upstream repository that the
// published runner does not ship, and what covers them instead. The test
// fails if one appears in `conformance list`: it then needs a row.
var notShipped = map[string]string{
	"session-renegotiation-404": "upstream's client scenario for a server that forgets each session right after " +
		"initialize is not in @modelcontextprotocol/conformance 0.2.0-alpha.12 (nor 0.1.16); " +
		"pool's TestALeaseBeginsClean_AFreshSessionForgottenIsRedialedOnceThroughTheProbe (Go fixture, TypeScript SDK 1.x " +
		"discover) and TestPeerMatrix's 404_to_a_fresh_session_is_redialed_once (the real peers) cover it",
}
