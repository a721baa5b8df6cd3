public enum LedgerStoreVersion {}
