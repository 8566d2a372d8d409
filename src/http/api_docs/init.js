// Renders the daemon's own OpenAPI document. Everything is served by the daemon: no
// validator badge, no outside request, so the page works offline.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  // "Try it out" sends requests to this daemon; a bearer token goes in "Authorize".
  tryItOutEnabled: false,
});
