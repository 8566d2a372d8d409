// Renders the daemon's own OpenAPI document. Everything is served by the daemon: no
// validator badge, no outside request, so the page works offline.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  // Operations open read-only; "Try it out" sends a request to this daemon, with the
  // bearer token typed into "Authorize".
  tryItOutEnabled: false,
});
