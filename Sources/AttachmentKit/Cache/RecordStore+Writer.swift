import CLMDB

extension RecordStore {
  /// The operations of one write transaction.
  struct Writer {
    let transaction: OpaquePointer
    let database: MDB_dbi

    /// What is stored under `name` now (this transaction's own writes included).
    func read(_ name: String) -> Found { RecordStore.get(transaction, database, name) }

    /// Stores `bytes` under `name`, replacing what was there.
    /// - Throws: `io_error` when the store is full or cannot be written.
    func put(_ name: String, _ bytes: [UInt8]) throws(AttachmentError) {
      var status: Int32 = 0
      RecordStore.withKey(name) { keyValue in
        bytes.withUnsafeBytes { raw in
          var value = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
          status = mdb_put(transaction, database, &keyValue, &value, 0)
        }
      }
      guard status == 0 else {
        throw AttachmentError(.ioError, "Cannot write a cache record: \(RecordStore.describe(status)).")
      }
    }

    /// Removes what is stored under `name`. Returns whether there was something.
    @discardableResult
    func remove(_ name: String) -> Bool {
      RecordStore.withKey(name) { keyValue in mdb_del(transaction, database, &keyValue, nil) == 0 }
    }

    /// Removes every name except `kept`. Returns how many were removed.
    func removeAll(except kept: Set<String>) -> Int {
      var cursor: OpaquePointer?
      guard mdb_cursor_open(transaction, database, &cursor) == 0, let cursor else { return 0 }
      defer { mdb_cursor_close(cursor) }
      var removed = 0
      var key = MDB_val()
      var value = MDB_val()
      var operation = MDB_FIRST
      while mdb_cursor_get(cursor, &key, &value, operation) == 0 {
        operation = MDB_NEXT
        if !kept.contains(RecordStore.string(key)), mdb_cursor_del(cursor, 0) == 0 {
          removed += 1
          // A deletion leaves the cursor on the next item: read it with GET_CURRENT.
          operation = MDB_GET_CURRENT
        }
      }
      return removed
    }
  }
}
