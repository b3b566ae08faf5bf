/// The two listeners serve can have: the public one (`--listen`), which a CDN and devices
/// reach, and the operator's (`--metrics-listen`), which only monitoring should reach.
enum Listener: Sendable {
  /// The public listener: the proxy routes, `/healthz`, `/readyz`, and `/metrics` unless an
  /// operator listener is configured.
  case published
  /// The operator listener: `/metrics`, `/readyz` and `/healthz` only.
  case operatorOnly
}

extension Route {
  /// The route as `listener` serves it: on the operator listener everything but `/metrics`,
  /// `/readyz` and `/healthz` is `notFound`; on the public listener `/metrics` is `notFound`
  /// when an operator listener exists (`separated`), so that no tier in front can pass it to
  /// anyone. `/readyz` and `/healthz` stay on both: the tier's own probe of a backend (Varnish's
  /// `.probe`, a load balancer's check) reaches only the port it sends requests to.
  func served(on listener: Listener, separated: Bool) -> Route {
    switch (listener, self) {
    case (.operatorOnly, .metrics), (.operatorOnly, .ready), (_, .health): self
    case (.operatorOnly, _): .notFound
    case (.published, .metrics): separated ? .notFound : self
    case (.published, _): self
    }
  }
}
