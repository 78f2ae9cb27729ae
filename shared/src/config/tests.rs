//! Unit tests of the configuration: defaults, variables over defaults and malformed values
//! (STYLE 8), and the inbound authentication settings (CONTRACT A1, A8).

use super::*;

mod gateway {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        Config::from_env_with(Config::fixed_defaults(), move |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn defaults_apply_without_variables() {
        assert_eq!(with(&[]).unwrap(), Config::fixed_defaults());
    }

    #[test]
    fn variables_override_defaults() {
        let c = with(&[
            ("MCP_ENDPOINT_PATH", "/mcp/"),
            ("MCP_ROUTING", "dynamic"),
            ("MCP_MAX_REQUEST_BYTES", "2048"),
            ("MCP_ALLOWED_HOSTS", "localhost, 127.0.0.1:3000"),
            ("MCP_REGISTRY_SOURCE", "file:/tmp/m.json"),
            ("MCP_PROFILE", "local"),
        ])
        .unwrap();
        assert_eq!(c.endpoint_path, "/mcp");
        assert_eq!(c.routing, RoutingMode::Dynamic);
        assert_eq!(c.max_request_bytes, 2048);
        assert_eq!(
            c.allowed_hosts,
            Some(vec!["localhost".into(), "127.0.0.1:3000".into()])
        );
        assert_eq!(
            c.registry_source,
            RegistrySource::File("/tmp/m.json".into())
        );
        assert_eq!(c.profile, Profile::Local);
        let c = with(&[
            ("MCP_TOOL_PROXY", "http://proxy.internal:3128"),
            ("MCP_TOOL_CONNECT_TIMEOUT_MS", "750"),
        ])
        .unwrap();
        assert_eq!(c.tool_proxy.as_deref(), Some("http://proxy.internal:3128"));
        assert_eq!(c.tool_connect_timeout_ms, 750);
    }

    #[test]
    fn t2_list_page_size() {
        assert_eq!(with(&[]).unwrap().list_page_size, None);
        assert_eq!(
            with(&[("MCP_LIST_PAGE_SIZE", "")]).unwrap().list_page_size,
            None
        );
        let c = with(&[("MCP_LIST_PAGE_SIZE", " 250 ")]).unwrap();
        assert_eq!(c.list_page_size, Some(250));
        for raw in ["0", "-3", "ten", "1.5", "abc"] {
            let error = with(&[("MCP_LIST_PAGE_SIZE", raw)]).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "MCP_LIST_PAGE_SIZE: '{raw}' is not a whole number from 1 to {}",
                    usize::MAX
                )
            );
        }
        // A value too large is named as too large (configuration error form).
        for raw in [
            "99999999999999999999999",
            "999999999999999999999999999999999999999999",
        ] {
            let error = with(&[("MCP_LIST_PAGE_SIZE", raw)]).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "MCP_LIST_PAGE_SIZE: '{raw}' is too large: at most {}",
                    usize::MAX
                )
            );
        }
        let error = with(&[("MCP_DEFAULT_TOOL_TIMEOUT_MS", "18446744073709551616")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "MCP_DEFAULT_TOOL_TIMEOUT_MS: '18446744073709551616' is too large: at most 18446744073709551615"
        );
    }

    #[test]
    fn k3_task_key_is_a_secret_reference() {
        assert_eq!(with(&[]).unwrap().task_key, None);
        let c = with(&[("MCP_TASK_KEY", "env:GATEWAY_TASK_KEY")]).unwrap();
        assert!(c.task_key.is_some());
        let c = with(&[(
            "MCP_TASK_KEY",
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:task-key",
        )])
        .unwrap();
        assert!(c.task_key.is_some());
        // The key itself is no reference: it would sit in the function's configuration.
        let error = with(&[(
            "MCP_TASK_KEY",
            "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
        )])
        .unwrap_err();
        assert_eq!(
            (error.variable, error.reason.as_str()),
            (
                "MCP_TASK_KEY",
                "expected a Secrets Manager or SSM ARN or env:<NAME> (CONTRACT M5)"
            )
        );
    }

    #[test]
    fn x12_secret_endpoints_and_ttl() {
        let c = with(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:4566"),
            ("AWS_ENDPOINT_URL_SSM", "http://127.0.0.1:5000/"),
            ("MCP_SECRET_TTL_S", "0"),
        ])
        .unwrap();
        assert_eq!(
            c.secrets_manager_endpoint.as_deref(),
            Some("http://127.0.0.1:4566")
        );
        assert_eq!(c.ssm_endpoint.as_deref(), Some("http://127.0.0.1:5000"));
        assert_eq!(c.secret_ttl_s, 0);
        let c = with(&[("AWS_ENDPOINT_URL_SECRETS_MANAGER", "https://sm.internal")]).unwrap();
        assert_eq!(
            c.secrets_manager_endpoint.as_deref(),
            Some("https://sm.internal")
        );
        assert_eq!((c.ssm_endpoint, c.secret_ttl_s), (None, 300));
        let error = with(&[("MCP_SECRET_TTL_S", "-1")]).unwrap_err();
        assert_eq!(
            (error.variable, error.reason.as_str()),
            (
                "MCP_SECRET_TTL_S",
                "'-1' is not a whole number of seconds from 0 to 18446744073709551615"
            )
        );
        let error = with(&[("AWS_ENDPOINT_URL_SSM", "ssm.local")]).unwrap_err();
        assert_eq!(error.variable, "AWS_ENDPOINT_URL_SSM");
    }

    #[test]
    fn x10_lambda_endpoint_from_the_lambda_variable_before_the_general_one() {
        let c = with(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:4566"),
            ("AWS_ENDPOINT_URL_LAMBDA", "http://127.0.0.1:9000/"),
        ])
        .unwrap();
        assert_eq!(c.lambda_endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        let c = with(&[("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")]).unwrap();
        assert_eq!(c.lambda_endpoint.as_deref(), Some("http://127.0.0.1:4566"));
        assert_eq!(with(&[]).unwrap().lambda_endpoint, None);
        for bad in [
            "lambda.local",
            "http://127.0.0.1:9000?x=1",
            "http://127.0.0.1:9000/#f",
            "http://u:p@127.0.0.1:9000",
        ] {
            let error = with(&[("AWS_ENDPOINT_URL_LAMBDA", bad)]).unwrap_err();
            assert_eq!(
                (error.variable, error.reason.as_str()),
                (
                    "AWS_ENDPOINT_URL_LAMBDA",
                    "expected an http:// or https:// URL without user info, query or fragment"
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn malformed_values_name_the_variable() {
        assert_eq!(
            with(&[("MCP_ROUTING", "portal")]).unwrap_err().variable,
            "MCP_ROUTING"
        );
        assert_eq!(
            with(&[("MCP_MAX_REQUEST_BYTES", "-1")])
                .unwrap_err()
                .variable,
            "MCP_MAX_REQUEST_BYTES"
        );
        assert_eq!(
            with(&[("MCP_SUPPORTED_PROTOCOL_VERSIONS", "2024-11-05")])
                .unwrap_err()
                .variable,
            "MCP_SUPPORTED_PROTOCOL_VERSIONS"
        );
        assert_eq!(
            with(&[("MCP_ENDPOINT_PATH", "mcp")]).unwrap_err().variable,
            "MCP_ENDPOINT_PATH"
        );
        assert_eq!(
            with(&[("MCP_TOOL_PROXY", "socks5://proxy:1080")])
                .unwrap_err()
                .variable,
            "MCP_TOOL_PROXY"
        );
        assert_eq!(
            with(&[("MCP_TOOL_CONNECT_TIMEOUT_MS", "0")])
                .unwrap_err()
                .variable,
            "MCP_TOOL_CONNECT_TIMEOUT_MS"
        );
        assert_eq!(
            with(&[("MCP_REGISTRY_SOURCE", "ftp://x")])
                .unwrap_err()
                .variable,
            "MCP_REGISTRY_SOURCE"
        );
    }
}

mod auth {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<AuthConfig, ConfigError> {
        let get = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        };
        AuthConfig::default().from_env_with(&get)
    }

    #[test]
    fn a1_auth_is_off_by_default_and_the_limit_defaults_to_120_per_minute() {
        let config = read(&[]).unwrap();
        assert_eq!(config.mode, AuthMode::None);
        assert_eq!(
            config.rate_limit,
            Some(RateLimit {
                requests: 120,
                window_s: 60
            })
        );
    }

    #[test]
    fn a1_token_mode_needs_the_table_and_oauth_needs_its_urls() {
        assert_eq!(
            read(&[("MCP_AUTH", "token")]).unwrap_err().variable,
            "MCP_AUTH_TABLE"
        );
        let token = read(&[
            ("MCP_AUTH", "token"),
            ("MCP_AUTH_TABLE", "t"),
            ("MCP_RATE_LIMIT", "off"),
        ])
        .unwrap();
        assert_eq!(token.rate_limit, None);
        let base = [("MCP_AUTH", "oauth"), ("MCP_AUTH_TABLE", "t")];
        assert_eq!(read(&base).unwrap_err().variable, "MCP_RESOURCE_URL");
        let with_url = [
            base[0],
            base[1],
            ("MCP_RESOURCE_URL", "https://x.test/mcp/"),
        ];
        assert_eq!(read(&with_url).unwrap_err().variable, "MCP_OAUTH_ISSUER");
        let full = [
            with_url[0],
            with_url[1],
            with_url[2],
            ("MCP_OAUTH_ISSUER", "https://issuer.test"),
            ("MCP_OAUTH_JWKS_URL", "https://issuer.test/jwks"),
            ("MCP_OAUTH_REQUIRED_SCOPES", "mcp:tools, mcp:read"),
        ];
        let config = read(&full).unwrap();
        assert_eq!(config.resource_url.as_deref(), Some("https://x.test/mcp"));
        let oauth = config.oauth.unwrap();
        assert_eq!(oauth.algorithms, ["RS256", "ES256"]);
        assert_eq!(oauth.required_scopes, ["mcp:tools", "mcp:read"]);
    }

    #[test]
    fn a1_malformed_values_name_their_variable() {
        for (vars, variable) in [
            (vec![("MCP_AUTH", "basic")], "MCP_AUTH"),
            (vec![("MCP_RATE_LIMIT", "120")], "MCP_RATE_LIMIT"),
            (vec![("MCP_RATE_LIMIT", "0/60")], "MCP_RATE_LIMIT"),
            (vec![("MCP_RESOURCE_URL", "/mcp")], "MCP_RESOURCE_URL"),
            (vec![("MCP_AUTH_TIMEOUT_MS", "0")], "MCP_AUTH_TIMEOUT_MS"),
        ] {
            assert_eq!(read(&vars).unwrap_err().variable, variable);
        }
        let hs = [
            ("MCP_AUTH", "oauth"),
            ("MCP_AUTH_TABLE", "t"),
            ("MCP_RESOURCE_URL", "https://x.test/mcp"),
            ("MCP_OAUTH_ISSUER", "https://issuer.test"),
            ("MCP_OAUTH_JWKS_URL", "https://issuer.test/jwks"),
            ("MCP_OAUTH_ALGORITHMS", "HS256"),
        ];
        assert_eq!(read(&hs).unwrap_err().variable, "MCP_OAUTH_ALGORITHMS");
    }

    #[test]
    fn a8_retry_after_counts_to_the_window_end_and_is_at_least_one_second() {
        let limit = RateLimit {
            requests: 2,
            window_s: 60,
        };
        assert_eq!(limit.window_start(125), 120);
        assert_eq!(limit.retry_after_s(125), 55);
        assert_eq!(limit.retry_after_s(120), 60);
        assert_eq!(limit.retry_after_s(179), 1);
    }
}
