package io.strata.master.file;

import io.strata.common.exception.InvalidArgumentException;

/**
 * The rule for the short names clients send that the master keeps and journals: owners, groups and client ids. At
 * most {@link #MAX_LENGTH} characters, none a control character. Without a bound, one recursive create with a huge
 * owner (kept on every parent directory it made, twice) made a journal batch past what one buffer holds, and a huge
 * client id was kept a thousand times in the table of recent requests. Stateless.
 */
public final class Names {
  /** The longest owner, group or client id taken (a Unix user name is at most 32; a UUID 36). */
  public static final int MAX_LENGTH = 256;

  private Names() {}

  /**
   * Refuses {@code name} (INVALID_ARGUMENT naming {@code what} and {@code context}) when it is empty, longer than
   * {@link #MAX_LENGTH} or holds a control character; null is no name and passes.
   */
  public static void check(String what, String name, String context) throws InvalidArgumentException {
    if (name == null) {
      return;
    }
    if (name.isEmpty()) {
      throw new InvalidArgumentException(context + ": an empty " + what);
    }
    if (name.length() > MAX_LENGTH) {
      throw new InvalidArgumentException(context + ": the " + what + " is " + name.length() + " characters long; at "
          + "most " + MAX_LENGTH + " are taken");
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isISOControl(name.charAt(i))) {
        throw new InvalidArgumentException(context + ": the " + what + " '" + name.replaceAll("\\p{Cntrl}", "?")
            + "' contains a control character at index " + i);
      }
    }
  }
}
