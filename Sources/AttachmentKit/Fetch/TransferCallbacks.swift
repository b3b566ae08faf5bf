import CCurl
import Glibc

// C callbacks: non-capturing, so they convert to C function pointers. The context is the
// transfer, passed unretained (the engine keeps it alive while its handle exists).

func transferHeaderCallback(
  _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  deliver(pointer, size * count, to: context) { $0.receiveHeader($1) }
}

func transferWriteCallback(
  _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  deliver(pointer, size * count, to: context) { $0.receiveBody($1) }
}

/// Hands a data callback's bytes to the transfer; returns what libcurl expects: the length
/// taken, or 0 to stop the transfer.
private func deliver(
  _ pointer: UnsafeMutablePointer<CChar>?, _ length: Int, to context: UnsafeMutableRawPointer?,
  _ take: (Transfer, UnsafeRawBufferPointer) -> Bool
) -> Int {
  guard let context else { return 0 }
  let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
  let bytes = UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : length)
  return take(transfer, bytes) ? length : 0
}

func transferOpenSocketCallback(
  _ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype,
  _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> Int32 {
  guard let context, let address else { return -1 }
  let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
  return transfer.openSocket(purpose: purpose, address: address)
}
