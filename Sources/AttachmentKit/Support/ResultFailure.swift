extension Result {
  /// The error of a failure; `nil` for a success.
  var failure: Failure? {
    guard case .failure(let error) = self else { return nil }
    return error
  }
}
