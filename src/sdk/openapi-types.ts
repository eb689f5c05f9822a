/**
 * GENERATED FILE, do not edit: npm run sdk:types (scripts/generate-sdk-types.ts) writes it with
 * openapi-typescript from the OpenAPI document Keyward serves at /openapi.json, which the routes'
 * schemas (src/api/) make. test/sdk/types-fresh.test.ts fails when it is stale.
 */
export interface paths {
    "/v1/oauth/{provider}/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start an OAuth flow for an end user */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Replays the first response for 24 hours. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description A provider slug. */
                    provider: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                        externalUserId: string;
                        /** @description Where the end user's browser is sent afterwards; must equal one of the server's allowed redirect URIs. */
                        redirectUri?: string;
                        /** @description Replaces the provider's default scopes (RFC 6749 scope tokens). */
                        scopes?: string[];
                        /**
                         * @description Seconds the flow stays open.
                         * @default 600
                         */
                        expiresIn?: number;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            provider: string;
                            externalUserId: string;
                            /** @enum {string} */
                            status: "pending";
                            /** @description The provider's authorization page; send the end user's browser there. */
                            authorizationUrl: string;
                            /** @description RFC 3339 UTC time. */
                            expiresAt: string;
                            /** @description RFC 3339 UTC time. */
                            createdAt: string;
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/credentials/static/{providerSlug}/connect": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Get a hosted form URL where an end user enters static credentials */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Replays the first response for 24 hours. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description A provider slug. */
                    providerSlug: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                        externalUserId: string;
                        /** @description Where the end user's browser is sent afterwards; must equal one of the server's allowed redirect URIs. */
                        redirectUri?: string;
                        /**
                         * @description Seconds the form stays open.
                         * @default 1800
                         */
                        expiresIn?: number;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            provider: string;
                            externalUserId: string;
                            /** @enum {string} */
                            status: "pending";
                            /** @description The hosted form, single use; give it to the end user only. */
                            url: string;
                            /** @description RFC 3339 UTC time. */
                            expiresAt: string;
                            /** @description RFC 3339 UTC time. */
                            createdAt: string;
                            fields: {
                                name: string;
                                label: string;
                                secret: boolean;
                                required: boolean;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/connect-sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a Connect page link where an end user connects and disconnects providers */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Replays the first response for 24 hours. */
                    "idempotency-key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                        externalUserId: string;
                        /** @description The providers the page offers, each enabled on the server; every enabled provider (when the page is read) if left out. */
                        providers?: string[];
                        /** @description Where the end user's browser is sent afterwards; must equal one of the server's allowed redirect URIs. */
                        redirectUri?: string;
                        /** @description Origins (https://host[:port], or http://localhost:PORT) of the pages that open the Connect page with connect.js: its events are posted to these only. */
                        allowedOrigins?: string[];
                        /**
                         * @description Seconds the link stays usable, for any number of connections.
                         * @default 1800
                         */
                        expiresIn?: number;
                        /** @description Stored on the end user (as PATCH /v1/end-users/{externalUserId} stores it); the page greets them by displayName, else by externalUserId. */
                        endUser?: {
                            /** @description 1 to 200 characters, no control characters. */
                            displayName?: string;
                            /** @description An email address (name@example.com), at most 254 characters. */
                            email?: string;
                        };
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            externalUserId: string;
                            /** @description The Connect page; give it to the end user's browser only (or to connect.js). */
                            url: string;
                            /** @description RFC 3339 UTC time. */
                            expiresAt: string;
                            /** @description RFC 3339 UTC time. */
                            createdAt: string;
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/end-users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the server's audience */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description The nextCursor of the page before. */
                    cursor?: string;
                    /** @description A provider slug. */
                    provider?: string;
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    prefix?: string;
                    /** @description key:value (repeat it for several: all must match): only end users with that tag and exactly that value. Keys are 1 to 40 characters of a-z, 0-9, "_", "." and "-"; at most 10 filters. */
                    tag?: string | string[];
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                externalUserId: string;
                                /** @description RFC 3339 UTC time. */
                                createdAt: string;
                                /** @description RFC 3339 UTC time. */
                                updatedAt: string;
                                /** @description The end user's name as people read it; null where unset. */
                                displayName: string | null;
                                /** @description The end user's email address; null where unset. */
                                email: string | null;
                                /** @description At most 10 key: value pairs, keys in order; {} where none. */
                                tags: {
                                    [key: string]: string;
                                };
                                credentials: {
                                    id: string;
                                    provider: string;
                                    type: "oauth2" | "static";
                                    status: "active" | "needs_reauth";
                                    /** @description RFC 3339 UTC time. */
                                    connectedAt: string;
                                    /** @description RFC 3339 UTC time. */
                                    updatedAt: string;
                                    lastUsedAt: string | null;
                                    lastCheck: {
                                        /** @description RFC 3339 UTC time. */
                                        at: string;
                                        /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                                        outcome: "valid" | "rejected" | "unreachable";
                                    } | null;
                                }[];
                            }[];
                            hasMore: boolean;
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/end-users/{externalUserId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one end user's credentials */
        get: {
            parameters: {
                query?: {
                    /** @description Refresh OAuth access tokens that expire sooner than this. */
                    minValiditySeconds?: number;
                };
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            externalUserId: string;
                            /** @description RFC 3339 UTC time. */
                            createdAt: string;
                            /** @description RFC 3339 UTC time. */
                            updatedAt: string;
                            /** @description The end user's name as people read it; null where unset. */
                            displayName: string | null;
                            /** @description The end user's email address; null where unset. */
                            email: string | null;
                            /** @description At most 10 key: value pairs, keys in order; {} where none. */
                            tags: {
                                [key: string]: string;
                            };
                            credentials: {
                                id: string;
                                provider: string;
                                type: "oauth2" | "static";
                                status: "active" | "needs_reauth";
                                /** @description RFC 3339 UTC time. */
                                connectedAt: string;
                                /** @description RFC 3339 UTC time. */
                                updatedAt: string;
                                lastUsedAt: string | null;
                                lastCheck: {
                                    /** @description RFC 3339 UTC time. */
                                    at: string;
                                    /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                                    outcome: "valid" | "rejected" | "unreachable";
                                } | null;
                                /** @description static: the field names and what the end user typed. */
                                values?: {
                                    [key: string]: string;
                                };
                                accessToken?: string;
                                tokenType?: string;
                                expiresAt?: string | null;
                                scopes?: string[];
                                refreshedAt?: string | null;
                                error?: {
                                    code: string;
                                    message?: string;
                                    retryable?: boolean;
                                };
                                /**
                                 * @description A write-only server (secretsReadable false): no accessToken and no values; the proxy uses the credential.
                                 * @enum {boolean}
                                 */
                                secretsWithheld?: true;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Revoke an end user's credentials */
        delete: {
            parameters: {
                query?: {
                    /** @description A provider slug. */
                    provider?: string;
                };
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            externalUserId: string;
                            revoked: {
                                id: string;
                                provider: string;
                                /** @description RFC 3339 UTC time. */
                                revokedAt: string;
                                providerRevocation: "succeeded" | "failed" | "not_supported";
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Set an end user's display name, email and tags */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description 1 to 200 characters, no control characters; null clears it. */
                        displayName?: string | null;
                        /** @description An email address (name@example.com), at most 254 characters; null clears it. */
                        email?: string | null;
                        /** @description Merged key by key into the end user's tags; a key set to null is removed. Keys are 1 to 40 characters of a-z, 0-9, "_", "." and "-"; at most 10 tags after the merge. */
                        tags?: {
                            [key: string]: string | null;
                        };
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            externalUserId: string;
                            /** @description RFC 3339 UTC time. */
                            createdAt: string;
                            /** @description RFC 3339 UTC time. */
                            updatedAt: string;
                            /** @description The end user's name as people read it; null where unset. */
                            displayName: string | null;
                            /** @description The end user's email address; null where unset. */
                            email: string | null;
                            /** @description At most 10 key: value pairs, keys in order; {} where none. */
                            tags: {
                                [key: string]: string;
                            };
                            credentials: {
                                id: string;
                                provider: string;
                                type: "oauth2" | "static";
                                status: "active" | "needs_reauth";
                                /** @description RFC 3339 UTC time. */
                                connectedAt: string;
                                /** @description RFC 3339 UTC time. */
                                updatedAt: string;
                                lastUsedAt: string | null;
                                lastCheck: {
                                    /** @description RFC 3339 UTC time. */
                                    at: string;
                                    /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                                    outcome: "valid" | "rejected" | "unreachable";
                                } | null;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/end-users/{externalUserId}/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check an end user's static credential at its provider
         * @description Sends the provider's verify request with the stored values. A rejected outcome turns the credential to needs_reauth (error credential_rejected) and sends credential.needs_reauth; a later valid one does not turn it back.
         */
        post: {
            parameters: {
                query: {
                    /** @description A provider slug. */
                    provider: string;
                };
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            provider: string;
                            /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                            outcome: "valid" | "rejected" | "unreachable";
                            /** @description RFC 3339 UTC time. */
                            at: string;
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/end-users/{externalUserId}/proxy/{provider}/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Call the provider's API with an end user's credential
         * @description Keyward calls `{apiBaseUrl}/{path}?{query}` with the member's active credential of `{provider}` and streams the answer back unchanged, with `keyward-upstream`. Request and answer bodies are the provider's.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                    /** @description A provider slug. */
                    provider: string;
                    /** @description Appended to the provider's API base URL as sent (percent-encoded), with the query string. */
                    path: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        /**
         * Call the provider's API with an end user's credential
         * @description Keyward calls `{apiBaseUrl}/{path}?{query}` with the member's active credential of `{provider}` and streams the answer back unchanged, with `keyward-upstream`. Request and answer bodies are the provider's.
         */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                    /** @description A provider slug. */
                    provider: string;
                    /** @description Appended to the provider's API base URL as sent (percent-encoded), with the query string. */
                    path: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        /**
         * Call the provider's API with an end user's credential
         * @description Keyward calls `{apiBaseUrl}/{path}?{query}` with the member's active credential of `{provider}` and streams the answer back unchanged, with `keyward-upstream`. Request and answer bodies are the provider's.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                    /** @description A provider slug. */
                    provider: string;
                    /** @description Appended to the provider's API base URL as sent (percent-encoded), with the query string. */
                    path: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        /**
         * Call the provider's API with an end user's credential
         * @description Keyward calls `{apiBaseUrl}/{path}?{query}` with the member's active credential of `{provider}` and streams the answer back unchanged, with `keyward-upstream`. Request and answer bodies are the provider's.
         */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                    /** @description A provider slug. */
                    provider: string;
                    /** @description Appended to the provider's API base URL as sent (percent-encoded), with the query string. */
                    path: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Call the provider's API with an end user's credential
         * @description Keyward calls `{apiBaseUrl}/{path}?{query}` with the member's active credential of `{provider}` and streams the answer back unchanged, with `keyward-upstream`. Request and answer bodies are the provider's.
         */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The company's own id of the end user, matched exactly (case-sensitive, no normalisation). */
                    externalUserId: string;
                    /** @description A provider slug. */
                    provider: string;
                    /** @description Appended to the provider's API base URL as sent (percent-encoded), with the query string. */
                    path: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description RFC 9457 problem details (application/problem+json). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds. */
                503: {
                    headers: {
                        /** @description Seconds to wait before sending the request again. */
                        "retry-after"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description RFC 9457 problem details (application/problem+json). */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            type: string;
                            title: string;
                            status: number;
                            detail: string;
                            code: string;
                            requestId: string;
                            errors?: {
                                path: string;
                                message: string;
                            }[];
                        };
                    };
                };
            };
        };
        trace?: never;
    };
}
export interface webhooks {
    "credential.connected": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An OAuth callback or a hosted form stored a credential (new, or replacing one).
         * @description Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CredentialConnectedEvent"];
                };
            };
            responses: {
                /** @description Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails. */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "credential.revoked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A credential was revoked (API, dashboard, or replaced by a new one).
         * @description Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CredentialRevokedEvent"];
                };
            };
            responses: {
                /** @description Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails. */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "credential.needs_reauth": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A refresh was refused (invalid_grant), or a check of static values was refused (401 or 403): the end user must connect again.
         * @description Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CredentialNeedsReauthEvent"];
                };
            };
            responses: {
                /** @description Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails. */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "credential.refresh_failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A refresh failed for an outage, the first time in a row.
         * @description Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CredentialRefreshFailedEvent"];
                };
            };
            responses: {
                /** @description Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails. */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "credential.recovered": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A refresh succeeded after refresh_failed.
         * @description Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CredentialRecoveredEvent"];
                };
            };
            responses: {
                /** @description Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails. */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "connect.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An OAuth flow ended as failed, or an OAuth flow, hosted form or connect session expired with nothing finished (error "expired").
         * @description Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ConnectFailedEvent"];
                };
            };
            responses: {
                /** @description Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails. */
                "2XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description RFC 9457 problem details (application/problem+json). */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            code: string;
            requestId: string;
            errors?: {
                path: string;
                message: string;
            }[];
        };
        /** @description An OAuth callback or a hosted form stored a credential (new, or replacing one). */
        CredentialConnectedEvent: {
            /** @enum {string} */
            type: "credential.connected";
            /** @description RFC 3339 UTC time, to the second. */
            timestamp: string;
            data: {
                serverId: string;
                externalUserId: string;
                /** @description The end user's display name, email and tags when the event was written. */
                endUser: {
                    displayName: string | null;
                    email: string | null;
                    tags: {
                        [key: string]: string;
                    };
                };
                credential: {
                    id: string;
                    provider: string;
                    type: "oauth2" | "static";
                    status: "active" | "needs_reauth" | "revoked";
                    /** @description RFC 3339 UTC time. */
                    connectedAt: string;
                    /** @description RFC 3339 UTC time. */
                    updatedAt: string;
                    lastUsedAt: string | null;
                    lastCheck: {
                        /** @description RFC 3339 UTC time. */
                        at: string;
                        /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                        outcome: "valid" | "rejected" | "unreachable";
                    } | null;
                };
                /** @description Set when an OAuth flow connected it. */
                flowId?: string;
                /** @description Set when a hosted form connected it. */
                sessionId?: string;
            };
        };
        /** @description A credential was revoked (API, dashboard, or replaced by a new one). */
        CredentialRevokedEvent: {
            /** @enum {string} */
            type: "credential.revoked";
            /** @description RFC 3339 UTC time, to the second. */
            timestamp: string;
            data: {
                serverId: string;
                externalUserId: string;
                /** @description The end user's display name, email and tags when the event was written. */
                endUser: {
                    displayName: string | null;
                    email: string | null;
                    tags: {
                        [key: string]: string;
                    };
                };
                credential: {
                    id: string;
                    provider: string;
                    type: "oauth2" | "static";
                    /** @enum {string} */
                    status: "revoked";
                    /** @description RFC 3339 UTC time. */
                    connectedAt: string;
                    /** @description RFC 3339 UTC time. */
                    updatedAt: string;
                    lastUsedAt: string | null;
                    lastCheck: {
                        /** @description RFC 3339 UTC time. */
                        at: string;
                        /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                        outcome: "valid" | "rejected" | "unreachable";
                    } | null;
                    /** @description RFC 3339 UTC time. */
                    revokedAt: string;
                };
                reason: "revoked" | "replaced";
                /** @description The id of the credential that replaced it. */
                replacedBy?: string;
                providerRevocation: "succeeded" | "failed" | "not_supported";
            };
        };
        /** @description A refresh was refused (invalid_grant), or a check of static values was refused (401 or 403): the end user must connect again. */
        CredentialNeedsReauthEvent: {
            /** @enum {string} */
            type: "credential.needs_reauth";
            /** @description RFC 3339 UTC time, to the second. */
            timestamp: string;
            data: {
                serverId: string;
                externalUserId: string;
                /** @description The end user's display name, email and tags when the event was written. */
                endUser: {
                    displayName: string | null;
                    email: string | null;
                    tags: {
                        [key: string]: string;
                    };
                };
                credential: {
                    id: string;
                    provider: string;
                    type: "oauth2" | "static";
                    status: "active" | "needs_reauth" | "revoked";
                    /** @description RFC 3339 UTC time. */
                    connectedAt: string;
                    /** @description RFC 3339 UTC time. */
                    updatedAt: string;
                    lastUsedAt: string | null;
                    lastCheck: {
                        /** @description RFC 3339 UTC time. */
                        at: string;
                        /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                        outcome: "valid" | "rejected" | "unreachable";
                    } | null;
                };
                error: {
                    code: "refresh_rejected" | "credential_rejected";
                    message: string;
                };
            };
        };
        /** @description A refresh failed for an outage, the first time in a row. */
        CredentialRefreshFailedEvent: {
            /** @enum {string} */
            type: "credential.refresh_failed";
            /** @description RFC 3339 UTC time, to the second. */
            timestamp: string;
            data: {
                serverId: string;
                externalUserId: string;
                /** @description The end user's display name, email and tags when the event was written. */
                endUser: {
                    displayName: string | null;
                    email: string | null;
                    tags: {
                        [key: string]: string;
                    };
                };
                credential: {
                    id: string;
                    provider: string;
                    type: "oauth2" | "static";
                    status: "active" | "needs_reauth" | "revoked";
                    /** @description RFC 3339 UTC time. */
                    connectedAt: string;
                    /** @description RFC 3339 UTC time. */
                    updatedAt: string;
                    lastUsedAt: string | null;
                    lastCheck: {
                        /** @description RFC 3339 UTC time. */
                        at: string;
                        /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                        outcome: "valid" | "rejected" | "unreachable";
                    } | null;
                };
                error: {
                    /** @enum {string} */
                    code: "refresh_failed";
                    message: string;
                    retryable: boolean;
                };
            };
        };
        /** @description A refresh succeeded after refresh_failed. */
        CredentialRecoveredEvent: {
            /** @enum {string} */
            type: "credential.recovered";
            /** @description RFC 3339 UTC time, to the second. */
            timestamp: string;
            data: {
                serverId: string;
                externalUserId: string;
                /** @description The end user's display name, email and tags when the event was written. */
                endUser: {
                    displayName: string | null;
                    email: string | null;
                    tags: {
                        [key: string]: string;
                    };
                };
                credential: {
                    id: string;
                    provider: string;
                    type: "oauth2" | "static";
                    status: "active" | "needs_reauth" | "revoked";
                    /** @description RFC 3339 UTC time. */
                    connectedAt: string;
                    /** @description RFC 3339 UTC time. */
                    updatedAt: string;
                    lastUsedAt: string | null;
                    lastCheck: {
                        /** @description RFC 3339 UTC time. */
                        at: string;
                        /** @description valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address). */
                        outcome: "valid" | "rejected" | "unreachable";
                    } | null;
                };
            };
        };
        /** @description An OAuth flow ended as failed, or an OAuth flow, hosted form or connect session expired with nothing finished (error "expired"). */
        ConnectFailedEvent: {
            /** @enum {string} */
            type: "connect.failed";
            /** @description RFC 3339 UTC time, to the second. */
            timestamp: string;
            data: {
                serverId: string;
                externalUserId: string;
                /** @description The end user's display name, email and tags when the event was written. */
                endUser: {
                    displayName: string | null;
                    email: string | null;
                    tags: {
                        [key: string]: string;
                    };
                };
                /** @description Absent for a connect session, which offers several. */
                provider?: string;
                /** @description Set for an OAuth flow. */
                flowId?: string;
                /** @description Set for a hosted form (cfs_…) or a connect session (csn_…) that expired. */
                sessionId?: string;
                /** @description access_denied, token_exchange_failed, flow_expired, expired, … */
                error: string;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
