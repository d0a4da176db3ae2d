// Starts Swagger UI (assets/swagger-ui-bundle.js) on #swagger-ui, showing
// the OpenAPI document its data-openapi attribute names. That address is
// relative to the page, so the page works wherever it is mounted (behind a
// path prefix too). This is a served file, not an inline script: the
// page's Content-Security-Policy allows scripts from the service only.
(function () {
  "use strict";
  var el = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: new URL(el.getAttribute("data-openapi"), document.baseURI).href,
    domNode: el,
    // Never contact validator.swagger.io, never take a document address
    // from the page's query string.
    validatorUrl: null,
    queryConfigEnabled: false,
    deepLinking: true,
    filter: true,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0
  });
})();
