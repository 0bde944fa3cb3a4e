package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcptrace/mcptrace/pool"
)

// The authorization scenarios: the server answers 401 (or 403 for a
// step-up) and the pool's Options.OAuthHandler, one of the Go SDK's OAuth
// clients, runs discovery, registration, authorization and the token
// exchange, then the request is sent again.
func init() {
	for _, name := range []string{
		"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
		"auth/basic-cimd",
		"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
		"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
		"auth/pre-registration",
		"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch",
		"auth/offline-access-scope", "auth/offline-access-not-supported",
		"auth/authorization-server-migration",
		"auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing",
		"auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized",
		"auth/metadata-issuer-mismatch",
		// DPoP (SEP-1932): the Go SDK v1.8.0 has no DPoP client, so these
		// get the plain authorization-code flow and fail their DPoP checks.
		"auth/dpop", "auth/dpop-nonce",
	} {
		scenarios[name] = scenario{options: authCodeOptions, run: authorizedCall}
	}
	scenarios["auth/client-credentials-basic"] = scenario{options: clientCredentialsOptions, run: authorizedCall}
	scenarios["auth/enterprise-managed-authorization"] = scenario{options: enterpriseOptions, run: authorizedCall}
}

// redirectURL is where the runner's authorization server sends the code; it
// redirects at once, so nothing listens there.
const redirectURL = "http://localhost:3000/callback"

// authCodeOptions gives the pool the Go SDK's authorization-code OAuth
// client, registering by client ID metadata document, by dynamic client
// registration, or with the pre-registered credentials the runner's context
// holds.
func authCodeOptions(e *env) (pool.Options, error) {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirectURL,
		AuthorizationCodeFetcher: fetchCode,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{
			URL: "https://conformance-test.local/client-metadata.json",
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirectURL}},
		},
	}
	id, _ := e.context["client_id"].(string)
	secret, _ := e.context["client_secret"].(string)
	if id != "" && secret != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{
			ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret},
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return pool.Options{}, fmt.Errorf("oauth handler: %w", err)
	}
	return pool.Options{OAuthHandler: h}, nil
}

// fetchCode plays the user: it follows the authorization URL to the
// runner's authorization server, which redirects straight to the callback
// with the code, the state and (RFC 9207) the issuer.
func fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		return nil, fmt.Errorf("authorization answered HTTP %d without a redirect to the callback", resp.StatusCode)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// authorizedCall lists the tools and calls test-tool on one leased
// session: the handshake meets the 401, the call may meet a 403 step-up.
func authorizedCall(ctx context.Context, p *pool.Pool, t *pool.Target, _ *env) error {
	return withLease(ctx, p, t, func(l pool.Lease) error {
		if _, err := l.Session().ListTools(ctx, nil); err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		return checkResult(l.CallTool(ctx, &mcp.CallToolParams{Name: "test-tool", Arguments: map[string]any{}}))
	})
}

// clientCredentialsOptions gives the pool the Go SDK's client-credentials
// OAuth client (SEP-1046) with the secret the runner's context holds.
func clientCredentialsOptions(e *env) (pool.Options, error) {
	id, _ := e.context["client_id"].(string)
	secret, _ := e.context["client_secret"].(string)
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}},
	})
	if err != nil {
		return pool.Options{}, fmt.Errorf("client credentials handler (context client_id, client_secret): %w", err)
	}
	return pool.Options{OAuthHandler: h}, nil
}

// enterpriseOptions gives the pool the Go SDK's enterprise-managed OAuth
// client (SEP-990: the IdP's ID token exchanged for an ID-JAG, then a JWT
// bearer grant at the MCP server's authorization server). That client wants
// the server's authorization server and resource up front, so they are read
// from the server's protected resource metadata (RFC 9728) first.
func enterpriseOptions(e *env) (pool.Options, error) {
	str := func(k string) string { s, _ := e.context[k].(string); return s }
	prm, err := resourceMetadata(e.serverURL)
	if err != nil {
		return pool.Options{}, err
	}
	if len(prm.AuthorizationServers) == 0 {
		return pool.Options{}, errors.New("protected resource metadata names no authorization server")
	}
	idToken := str("idp_id_token")
	h, err := extauth.NewEnterpriseHandler(&extauth.EnterpriseHandlerConfig{
		IdPIssuerURL:     str("idp_issuer"),
		IdPCredentials:   &oauthex.ClientCredentials{ClientID: str("idp_client_id")},
		MCPAuthServerURL: prm.AuthorizationServers[0],
		MCPResourceURI:   prm.Resource,
		MCPCredentials: &oauthex.ClientCredentials{
			ClientID: str("client_id"), ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: str("client_secret")},
		},
		IDTokenFetcher: func(context.Context) (*oauth2.Token, error) {
			return (&oauth2.Token{}).WithExtra(map[string]any{"id_token": idToken}), nil
		},
	})
	if err != nil {
		return pool.Options{}, fmt.Errorf("enterprise handler: %w", err)
	}
	return pool.Options{OAuthHandler: h}, nil
}

// resourceMetadata reads the server's protected resource metadata at the
// RFC 9728 well-known URL with the endpoint's path, then at the root.
func resourceMetadata(server string) (*oauthex.ProtectedResourceMetadata, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("server URL: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, path := range []string{"/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/"), "/.well-known/oauth-protected-resource"} {
		m := *u
		m.Path, m.RawQuery = path, ""
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, m.String(), server, http.DefaultClient)
		if err == nil {
			return prm, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("protected resource metadata: %w", errors.Join(errs...))
}
