package io.strata.client.options;

/** Options of {@code delete}. Immutable. */
public final class DeleteOptions {
  private final boolean recursive;
  private final boolean strataOnly;

  private DeleteOptions(boolean recursive, boolean strataOnly) {
    this.recursive = recursive;
    this.strataOnly = strataOnly;
  }

  /** Not recursive (a non-empty directory is refused); the under file system copy is deleted too. */
  public static DeleteOptions defaults() {
    return new DeleteOptions(false, false);
  }

  public boolean recursive() {
    return recursive;
  }

  /** True: remove from Strata only; the under file system copy stays and is loaded again on next access. */
  public boolean strataOnly() {
    return strataOnly;
  }

  public DeleteOptions withRecursive(boolean recursive) {
    return new DeleteOptions(recursive, strataOnly);
  }

  public DeleteOptions withStrataOnly(boolean strataOnly) {
    return new DeleteOptions(recursive, strataOnly);
  }
}
