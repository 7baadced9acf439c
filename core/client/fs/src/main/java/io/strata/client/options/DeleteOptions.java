package io.strata.client.options;

/** Options of {@code delete}. Immutable. */
public final class DeleteOptions {
  private final boolean recursive;

  private DeleteOptions(boolean recursive) {
    this.recursive = recursive;
  }

  /** Not recursive: a non-empty directory is refused. */
  public static DeleteOptions defaults() {
    return new DeleteOptions(false);
  }

  public boolean recursive() {
    return recursive;
  }

  public DeleteOptions withRecursive(boolean recursive) {
    return new DeleteOptions(recursive);
  }
}
