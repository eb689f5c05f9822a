/**
 * The built-in provider catalog: OAuth 2.0 providers and static (API key) providers that Keyward
 * knows out of the box, as plain data. Endpoints, scopes and quirks are taken from each provider's
 * public documentation, linked in `source`. No I/O happens here.
 */

import type { OAuthProvider, Provider, StaticProvider } from './provider-definition.js';

export const OAUTH_PROVIDERS: readonly OAuthProvider[] = [
  {
    kind: 'oauth2',
    slug: 'github',
    name: 'GitHub',
    authorizationUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    // No RFC 7009 endpoint: GitHub revokes through `DELETE /applications/{client_id}/token` on its REST API.
    // OAuth App user tokens do not expire and come without a refresh token (only GitHub Apps with
    // "user-to-server token expiration" enabled issue 8-hour tokens plus refresh tokens).
    apiRevocation: {
      method: 'DELETE',
      path: 'applications/{clientId}/token',
      tokenField: 'access_token',
      headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
      source: 'https://docs.github.com/en/rest/apps/oauth-applications#delete-an-app-token',
    },
    defaultScopes: ['read:user', 'user:email'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps',
    api: {
      apiBaseUrl: 'https://api.github.com',
      apiHosts: ['uploads.github.com'],
      source: 'https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api',
    },
  },
  {
    kind: 'oauth2',
    slug: 'google',
    name: 'Google',
    authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    revocationUrl: 'https://oauth2.googleapis.com/revoke',
    defaultScopes: ['openid', 'email', 'profile'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    extraAuthorizationParams: {
      // why: a refresh token is only issued with access_type=offline ("Refresh the access token (offline access)").
      access_type: 'offline',
      // why: Google returns a refresh token only on first consent; prompt=consent makes it issue one on every grant.
      prompt: 'consent',
    },
    source: 'https://developers.google.com/identity/protocols/oauth2/web-server',
    api: { apiBaseUrl: 'https://www.googleapis.com', apiHosts: ['*.googleapis.com'], source: 'https://developers.google.com/workspace/guides/get-started' },
  },
  {
    kind: 'oauth2',
    slug: 'slack',
    name: 'Slack',
    authorizationUrl: 'https://slack.com/oauth/v2/authorize',
    tokenUrl: 'https://slack.com/api/oauth.v2.access',
    // auth.revoke takes the token to revoke as its `token` POST parameter, as RFC 7009 does, and the
    // token is its own authentication ("Tokens should be passed as an HTTP Authorization header or
    // alternatively, as a POST parameter"): no client credentials go with it.
    revocationUrl: 'https://slack.com/api/auth.revoke',
    revocationClientAuth: 'none',
    // Keyward holds the end user's own token, so the scopes are user scopes: OAuth v2 takes them in
    // `user_scope` (`scope` would ask for a bot token, which belongs to the workspace, not the user),
    // and answers the user's token under `authed_user`, with token_type "user".
    scopeParam: 'user_scope',
    tokenResponseRoot: 'authed_user',
    extraTokenTypes: ['user'],
    defaultScopes: ['channels:read', 'chat:write', 'users:read'],
    // Slack documents the scope lists as comma-separated.
    scopeSeparator: ',',
    // oauth.v2.access: "avoid sending client_id and client_secret as parameters … supply [them] using HTTP Basic".
    tokenEndpointAuth: 'client_secret_basic',
    source: 'https://docs.slack.dev/authentication/installing-with-oauth',
    api: { apiBaseUrl: 'https://slack.com/api', source: 'https://docs.slack.dev/apis/web-api/' },
  },
  {
    kind: 'oauth2',
    slug: 'microsoft',
    name: 'Microsoft',
    // Microsoft identity platform v2.0 endpoints on the multi-tenant `common` authority
    // (work/school and personal Microsoft accounts).
    authorizationUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    // No RFC 7009 endpoint: refresh tokens are invalidated via Graph `revokeSignInSessions`.
    // `offline_access` is what makes the v2.0 endpoint return a refresh token.
    defaultScopes: ['openid', 'profile', 'email', 'offline_access', 'User.Read'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow',
    api: { apiBaseUrl: 'https://graph.microsoft.com', source: 'https://learn.microsoft.com/en-us/graph/use-the-api' },
  },
  {
    kind: 'oauth2',
    slug: 'notion',
    name: 'Notion',
    authorizationUrl: 'https://api.notion.com/v1/oauth/authorize',
    tokenUrl: 'https://api.notion.com/v1/oauth/token',
    // Notion's `POST /v1/oauth/revoke` takes a JSON body and a Notion-Version header, so it is not an
    // RFC 7009 endpoint and is left out here.
    // Notion has no OAuth scopes: capabilities are configured on the integration itself.
    defaultScopes: [],
    scopeSeparator: ' ',
    // The token endpoint requires HTTP Basic client authentication ("OAuth endpoints (basic authentication)").
    tokenEndpointAuth: 'client_secret_basic',
    extraAuthorizationParams: {
      // why: Notion's authorization URL requires owner=user (see "Authorization" guide, step 1).
      owner: 'user',
    },
    source: 'https://developers.notion.com/docs/authorization',
    api: { apiBaseUrl: 'https://api.notion.com', source: 'https://developers.notion.com/reference/intro' },
  },
  {
    kind: 'oauth2',
    slug: 'linear',
    name: 'Linear',
    authorizationUrl: 'https://linear.app/oauth/authorize',
    tokenUrl: 'https://api.linear.app/oauth/token',
    revocationUrl: 'https://api.linear.app/oauth/revoke',
    defaultScopes: ['read'],
    // Linear documents `scope` as a "Comma separated list of scopes".
    scopeSeparator: ',',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://linear.app/developers/oauth-2-0-authentication',
    api: { apiBaseUrl: 'https://api.linear.app', source: 'https://linear.app/developers/graphql' },
  },
  {
    kind: 'oauth2',
    slug: 'gitlab',
    name: 'GitLab',
    // GitLab.com; self-managed instances use the same paths on their own host (a custom provider).
    authorizationUrl: 'https://gitlab.com/oauth/authorize',
    tokenUrl: 'https://gitlab.com/oauth/token',
    revocationUrl: 'https://gitlab.com/oauth/revoke',
    defaultScopes: ['read_user'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://docs.gitlab.com/api/oauth2/',
    api: { apiBaseUrl: 'https://gitlab.com/api/v4', source: 'https://docs.gitlab.com/api/rest/' },
  },
  {
    kind: 'oauth2',
    slug: 'atlassian',
    name: 'Atlassian',
    authorizationUrl: 'https://auth.atlassian.com/authorize',
    tokenUrl: 'https://auth.atlassian.com/oauth/token',
    // No RFC 7009 endpoint is documented for Atlassian 3LO apps.
    // `offline_access` is what makes Atlassian issue a (rotating) refresh token.
    defaultScopes: ['read:me', 'read:jira-user', 'read:jira-work', 'offline_access'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    extraAuthorizationParams: {
      // why: the 3LO authorization URL requires audience=api.atlassian.com ("OAuth 2.0 (3LO) apps").
      audience: 'api.atlassian.com',
      // why: Atlassian's documented authorization URL includes prompt=consent so the consent screen is shown.
      prompt: 'consent',
    },
    source: 'https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/',
    api: { apiBaseUrl: 'https://api.atlassian.com', source: 'https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/' },
  },
  {
    kind: 'oauth2',
    slug: 'hubspot',
    name: 'HubSpot',
    authorizationUrl: 'https://app.hubspot.com/oauth/authorize',
    // v3 token endpoint (credentials in the form body); the v1 `/oauth/v1/token` is deprecated for 2027-02-16.
    tokenUrl: 'https://api.hubapi.com/oauth/v3/token',
    // No RFC 7009 endpoint: HubSpot deletes refresh tokens via its own token-management API.
    defaultScopes: ['oauth', 'crm.objects.contacts.read'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/oauth/working-with-oauth',
    api: { apiBaseUrl: 'https://api.hubapi.com', source: 'https://developers.hubspot.com/docs/api/overview' },
  },
  {
    kind: 'oauth2',
    slug: 'salesforce',
    name: 'Salesforce',
    // Production login host; sandboxes use test.salesforce.com and orgs may use their My Domain host.
    authorizationUrl: 'https://login.salesforce.com/services/oauth2/authorize',
    tokenUrl: 'https://login.salesforce.com/services/oauth2/token',
    revocationUrl: 'https://login.salesforce.com/services/oauth2/revoke',
    // `refresh_token` is the Salesforce scope that allows a refresh token to be issued.
    defaultScopes: ['api', 'refresh_token'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://help.salesforce.com/s/articleView?id=sf.remoteaccess_oauth_web_server_flow.htm',
    // No `api`: each org has its own instance URL (the token response's `instance_url`), not one base URL.
  },
  {
    kind: 'oauth2',
    slug: 'dropbox',
    name: 'Dropbox',
    authorizationUrl: 'https://www.dropbox.com/oauth2/authorize',
    tokenUrl: 'https://api.dropboxapi.com/oauth2/token',
    // No RFC 7009 endpoint: `/2/auth/token/revoke` is an RPC call authenticated with the token itself.
    defaultScopes: ['account_info.read', 'files.metadata.read'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    extraAuthorizationParams: {
      // why: Dropbox issues short-lived access tokens; token_access_type=offline is needed for a refresh token (OAuth Guide).
      token_access_type: 'offline',
    },
    source: 'https://developers.dropbox.com/oauth-guide',
    api: {
      apiBaseUrl: 'https://api.dropboxapi.com',
      apiHosts: ['content.dropboxapi.com'],
      source: 'https://www.dropbox.com/developers/documentation/http/documentation',
    },
  },
  {
    kind: 'oauth2',
    slug: 'zoom',
    name: 'Zoom',
    authorizationUrl: 'https://zoom.us/oauth/authorize',
    tokenUrl: 'https://zoom.us/oauth/token',
    revocationUrl: 'https://zoom.us/oauth/revoke',
    // Zoom grants the scopes configured on the app; the authorization request carries no `scope`
    // in Zoom's documented flow, so nothing is requested by default.
    defaultScopes: [],
    scopeSeparator: ' ',
    // Zoom requires `Authorization: Basic base64(client_id:client_secret)` on the token and revoke endpoints.
    tokenEndpointAuth: 'client_secret_basic',
    source: 'https://developers.zoom.us/docs/integrations/oauth/',
    api: { apiBaseUrl: 'https://api.zoom.us/v2', source: 'https://developers.zoom.us/docs/api/' },
  },
  {
    kind: 'oauth2',
    slug: 'discord',
    name: 'Discord',
    authorizationUrl: 'https://discord.com/oauth2/authorize',
    tokenUrl: 'https://discord.com/api/oauth2/token',
    revocationUrl: 'https://discord.com/api/oauth2/token/revoke',
    defaultScopes: ['identify', 'email'],
    scopeSeparator: ' ',
    // Discord's documented token exchange examples authenticate the client with HTTP Basic.
    tokenEndpointAuth: 'client_secret_basic',
    source: 'https://discord.com/developers/docs/topics/oauth2',
    api: { apiBaseUrl: 'https://discord.com/api', source: 'https://discord.com/developers/docs/reference#api-reference-base-url' },
  },
  {
    kind: 'oauth2',
    slug: 'asana',
    name: 'Asana',
    authorizationUrl: 'https://app.asana.com/-/oauth_authorize',
    tokenUrl: 'https://app.asana.com/-/oauth_token',
    revocationUrl: 'https://app.asana.com/-/oauth_revoke',
    // Granular `<resource>:<action>` scopes (GA 2025). Apps registered with "Full permissions" must
    // instead send no scope (or `default`); the two modes are mutually exclusive.
    defaultScopes: ['users:read', 'workspaces:read', 'projects:read', 'tasks:read'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://developers.asana.com/docs/oauth',
    api: { apiBaseUrl: 'https://app.asana.com/api/1.0', source: 'https://developers.asana.com/docs/overview' },
  },
  {
    kind: 'oauth2',
    slug: 'box',
    name: 'Box',
    authorizationUrl: 'https://account.box.com/api/oauth2/authorize',
    tokenUrl: 'https://api.box.com/oauth2/token',
    revocationUrl: 'https://api.box.com/oauth2/revoke',
    // Box defaults to the app's configured scopes; `root_readonly` narrows to "Read all files and folders".
    defaultScopes: ['root_readonly'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://developer.box.com/guides/authentication/oauth2/',
    api: { apiBaseUrl: 'https://api.box.com/2.0', apiHosts: ['upload.box.com'], source: 'https://developer.box.com/reference/' },
  },
  {
    kind: 'oauth2',
    slug: 'spotify',
    name: 'Spotify',
    authorizationUrl: 'https://accounts.spotify.com/authorize',
    tokenUrl: 'https://accounts.spotify.com/api/token',
    // No revocation endpoint: users remove access from their Spotify account page.
    defaultScopes: ['user-read-email', 'user-read-private'],
    scopeSeparator: ' ',
    // The authorization-code flow sends `Authorization: Basic base64(client_id:client_secret)`.
    tokenEndpointAuth: 'client_secret_basic',
    source: 'https://developer.spotify.com/documentation/web-api/tutorials/code-flow',
    api: { apiBaseUrl: 'https://api.spotify.com/v1', source: 'https://developer.spotify.com/documentation/web-api' },
  },
  {
    kind: 'oauth2',
    slug: 'xero',
    name: 'Xero',
    authorizationUrl: 'https://login.xero.com/identity/connect/authorize',
    tokenUrl: 'https://identity.xero.com/connect/token',
    revocationUrl: 'https://identity.xero.com/connect/revocation',
    // `offline_access` is what makes Xero issue a refresh token; API scopes are added per integration.
    defaultScopes: ['openid', 'profile', 'email', 'offline_access'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_basic',
    source: 'https://developer.xero.com/documentation/guides/oauth2/auth-flow',
    api: { apiBaseUrl: 'https://api.xero.com', source: 'https://developer.xero.com/documentation/guides/oauth2/auth-flow' },
  },
  {
    kind: 'oauth2',
    slug: 'quickbooks',
    name: 'QuickBooks',
    authorizationUrl: 'https://appcenter.intuit.com/connect/oauth2',
    tokenUrl: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
    // Intuit's revoke endpoint (https://developer.api.intuit.com/v2/oauth2/tokens/revoke) takes a JSON
    // body, not RFC 7009 form parameters, so it is left out here.
    defaultScopes: ['com.intuit.quickbooks.accounting'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_basic',
    source: 'https://developer.intuit.com/app/developer/qbo/docs/develop/authentication-and-authorization/oauth-2.0',
    api: {
      apiBaseUrl: 'https://quickbooks.api.intuit.com',
      apiHosts: ['sandbox-quickbooks.api.intuit.com'],
      source: 'https://developer.intuit.com/app/developer/qbo/docs/develop',
    },
  },
  {
    kind: 'oauth2',
    slug: 'twitch',
    name: 'Twitch',
    authorizationUrl: 'https://id.twitch.tv/oauth2/authorize',
    tokenUrl: 'https://id.twitch.tv/oauth2/token',
    revocationUrl: 'https://id.twitch.tv/oauth2/revoke',
    defaultScopes: ['user:read:email'],
    scopeSeparator: ' ',
    tokenEndpointAuth: 'client_secret_post',
    source: 'https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/',
    api: { apiBaseUrl: 'https://api.twitch.tv/helix', source: 'https://dev.twitch.tv/docs/api/' },
  },
];

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const STATIC_PROVIDERS: readonly StaticProvider[] = [
  {
    kind: 'static',
    slug: 'openai',
    name: 'OpenAI',
    fields: [
      {
        name: 'apiKey',
        label: 'API key',
        secret: true,
        required: true,
        // Covers legacy `sk-…` and project/service-account keys (`sk-proj-…`, `sk-svcacct-…`).
        pattern: '^sk-[A-Za-z0-9_-]{20,}$',
        patternHint: '"sk-" followed by at least 20 letters, digits, "-" or "_" (e.g. sk-proj-…)',
      },
      {
        name: 'organizationId',
        label: 'Organization ID',
        secret: false,
        required: false,
        pattern: '^org-[A-Za-z0-9_-]{8,}$',
        patternHint: '"org-" followed by at least 8 letters, digits, "-" or "_"',
      },
    ],
    source: 'https://platform.openai.com/docs/api-reference/authentication',
    api: {
      apiBaseUrl: 'https://api.openai.com',
      auth: 'bearer:apiKey',
      verify: 'GET /v1/models',
      source: 'https://platform.openai.com/docs/api-reference/authentication',
    },
  },
  {
    kind: 'static',
    slug: 'anthropic',
    name: 'Anthropic',
    fields: [
      {
        name: 'apiKey',
        label: 'API key',
        secret: true,
        required: true,
        pattern: '^sk-ant-[A-Za-z0-9_-]{20,}$',
        patternHint: '"sk-ant-" followed by at least 20 letters, digits, "-" or "_"',
      },
    ],
    source: 'https://docs.anthropic.com/en/api/overview',
    api: {
      apiBaseUrl: 'https://api.anthropic.com',
      auth: 'header:x-api-key:{apiKey}',
      verify: 'GET /v1/models',
      // Every request must name the API version (https://docs.anthropic.com/en/api/versioning).
      verifyHeaders: { 'anthropic-version': '2023-06-01' },
      source: 'https://docs.anthropic.com/en/api/overview',
    },
  },
  {
    kind: 'static',
    slug: 'stripe',
    name: 'Stripe',
    fields: [
      {
        name: 'secretKey',
        label: 'Secret or restricted key',
        secret: true,
        required: true,
        pattern: '^(sk|rk)_(live|test)_[A-Za-z0-9]{10,}$',
        patternHint: 'sk_live_, sk_test_, rk_live_ or rk_test_ followed by at least 10 letters or digits',
      },
    ],
    source: 'https://docs.stripe.com/keys',
    api: { apiBaseUrl: 'https://api.stripe.com', auth: 'basic:{secretKey}:', verify: 'GET /v1/balance', source: 'https://docs.stripe.com/api/authentication' },
  },
  {
    kind: 'static',
    slug: 'twilio',
    name: 'Twilio',
    fields: [
      {
        name: 'accountSid',
        label: 'Account SID',
        secret: false,
        required: true,
        pattern: '^AC[0-9a-fA-F]{32}$',
        patternHint: '"AC" followed by 32 hexadecimal characters',
      },
      { name: 'authToken', label: 'Auth token', secret: true, required: true },
    ],
    source: 'https://www.twilio.com/docs/iam/credentials/api',
    api: {
      apiBaseUrl: 'https://api.twilio.com',
      auth: 'basic:{accountSid}:{authToken}',
      verify: 'GET /2010-04-01/Accounts/{accountSid}.json',
      source: 'https://www.twilio.com/docs/usage/requests-to-twilio',
    },
  },
  {
    kind: 'static',
    slug: 'sendgrid',
    name: 'SendGrid',
    fields: [
      {
        name: 'apiKey',
        label: 'API key',
        secret: true,
        required: true,
        pattern: '^SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}$',
        patternHint: '"SG." followed by two parts of at least 16 letters, digits, "-" or "_", joined by a dot',
      },
    ],
    source: 'https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys',
    api: {
      apiBaseUrl: 'https://api.sendgrid.com',
      auth: 'bearer:apiKey',
      verify: 'GET /v3/scopes',
      source: 'https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/authentication',
    },
  },
  {
    kind: 'static',
    slug: 'mailgun',
    name: 'Mailgun',
    fields: [
      // Mailgun key formats have changed over time (`key-…`, then hex segments), so no pattern.
      { name: 'apiKey', label: 'API key', secret: true, required: true },
      {
        name: 'domain',
        label: 'Sending domain',
        secret: false,
        required: true,
        pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$',
        patternHint: 'a domain name, e.g. mg.example.com',
      },
      {
        name: 'region',
        label: 'Region',
        secret: false,
        required: false,
        pattern: '^(us|eu)$',
        patternHint: '"us" (api.mailgun.net, the default) or "eu" (api.eu.mailgun.net)',
      },
    ],
    source: 'https://documentation.mailgun.com/docs/mailgun/api-reference/authentication',
    // EU domains are served from api.eu.mailgun.net: the call picks it with keyward-base-url. No
    // `verify`: the check goes to the base URL, and an EU key asked there would be refused although valid.
    api: {
      apiBaseUrl: 'https://api.mailgun.net',
      apiHosts: ['api.eu.mailgun.net'],
      auth: 'basic:api:{apiKey}',
      source: 'https://documentation.mailgun.com/docs/mailgun/api-reference/authentication',
    },
  },
  {
    kind: 'static',
    slug: 'postmark',
    name: 'Postmark',
    fields: [
      {
        name: 'serverToken',
        label: 'Server API token',
        secret: true,
        required: true,
        pattern: UUID,
        patternHint: 'a UUID, e.g. 00000000-0000-0000-0000-000000000000',
      },
    ],
    source: 'https://postmarkapp.com/developer/api/overview#authentication',
    api: {
      apiBaseUrl: 'https://api.postmarkapp.com',
      auth: 'header:X-Postmark-Server-Token:{serverToken}',
      verify: 'GET /server',
      // Postmark answers 415 to a request that does not accept JSON
      // (https://postmarkapp.com/updates/changes-to-email-api-validation-action-may-be-required).
      verifyHeaders: { accept: 'application/json' },
      source: 'https://postmarkapp.com/developer/api/server-api',
    },
  },
  {
    kind: 'static',
    slug: 'datadog',
    name: 'Datadog',
    fields: [
      { name: 'apiKey', label: 'API key', secret: true, required: true },
      { name: 'applicationKey', label: 'Application key', secret: true, required: true },
      {
        name: 'site',
        label: 'Site',
        secret: false,
        required: true,
        pattern: '^([a-z0-9-]+\\.)?(datadoghq\\.com|datadoghq\\.eu|ddog-gov\\.com)$',
        patternHint: 'your Datadog site, e.g. datadoghq.com, us5.datadoghq.com, datadoghq.eu, ap1.datadoghq.com',
      },
    ],
    source: 'https://docs.datadoghq.com/account_management/api-app-keys/',
    // No `api`: a call takes two keys in two headers (DD-API-KEY and DD-APPLICATION-KEY) on the site's own
    // host, which one `auth` cannot say.
  },
  {
    kind: 'static',
    slug: 'cloudflare',
    name: 'Cloudflare',
    fields: [
      { name: 'apiToken', label: 'API token', secret: true, required: true },
      {
        name: 'accountId',
        label: 'Account ID',
        secret: false,
        required: false,
        pattern: '^[0-9a-fA-F]{32}$',
        patternHint: '32 hexadecimal characters',
      },
    ],
    source: 'https://developers.cloudflare.com/fundamentals/api/get-started/create-token/',
    // No `verify`: /user/tokens/verify checks user tokens only, and refuses an account-owned token
    // (checked at /accounts/{accountId}/tokens/verify, with an account id the form may not have).
    api: {
      apiBaseUrl: 'https://api.cloudflare.com/client/v4',
      auth: 'bearer:apiToken',
      source: 'https://developers.cloudflare.com/fundamentals/api/how-to/make-api-calls/',
    },
  },
  {
    kind: 'static',
    slug: 'resend',
    name: 'Resend',
    fields: [
      {
        name: 'apiKey',
        label: 'API key',
        secret: true,
        required: true,
        pattern: '^re_[A-Za-z0-9_-]{8,}$',
        patternHint: '"re_" followed by at least 8 letters, digits, "-" or "_"',
      },
    ],
    source: 'https://resend.com/docs/api-reference/introduction',
    // No `verify`: a sending-only key is refused by every endpoint but sending, so no cheap request tells a
    // valid key from a bad one.
    api: { apiBaseUrl: 'https://api.resend.com', auth: 'bearer:apiKey', source: 'https://resend.com/docs/api-reference/introduction' },
  },
  {
    kind: 'static',
    slug: 'groq',
    name: 'Groq',
    fields: [
      {
        name: 'apiKey',
        label: 'API key',
        secret: true,
        required: true,
        pattern: '^gsk_[A-Za-z0-9]{20,}$',
        patternHint: '"gsk_" followed by at least 20 letters or digits',
      },
    ],
    source: 'https://console.groq.com/docs/api-reference',
    api: { apiBaseUrl: 'https://api.groq.com/openai', auth: 'bearer:apiKey', verify: 'GET /v1/models', source: 'https://console.groq.com/docs/api-reference' },
  },
  {
    kind: 'static',
    slug: 'mistral',
    name: 'Mistral AI',
    fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
    source: 'https://docs.mistral.ai/api/',
    api: { apiBaseUrl: 'https://api.mistral.ai', auth: 'bearer:apiKey', verify: 'GET /v1/models', source: 'https://docs.mistral.ai/api/' },
  },
  {
    kind: 'static',
    slug: 'algolia',
    name: 'Algolia',
    fields: [
      { name: 'applicationId', label: 'Application ID', secret: false, required: true },
      { name: 'apiKey', label: 'API key', secret: true, required: true },
    ],
    source: 'https://www.algolia.com/doc/guides/security/api-keys/',
    // No `api`: each application has its own hosts ({applicationId}-dsn.algolia.net) and a call takes two
    // headers, which one base URL and one `auth` cannot say.
  },
];

/** slug -> provider, over both lists. */
export const CATALOG: ReadonlyMap<string, Provider> = new Map<string, Provider>(
  [...OAUTH_PROVIDERS, ...STATIC_PROVIDERS].map((provider) => [provider.slug, provider]),
);

/** The built-in provider with this slug, if there is one. */
export function catalogProvider(slug: string): Provider | undefined {
  return CATALOG.get(slug);
}
