package io.strata.common.conf;

import java.util.Objects;
import java.util.function.Predicate;

/**
 * A configuration key declared once: its name, type, default, and documentation. Keys are declared as
 * constants in the module that owns them ({@code CommonKeys}, {@code MasterKeys}, {@code WorkerKeys},
 * {@code ClientKeys}); a {@link StrataConf} holds the values.
 *
 * <p>Immutable and thread-safe.
 */
public final class PropertyKey<T> {
  /** The value types a key may have; each parses a string form. */
  public enum Type {
    STRING, INT, LONG, DOUBLE, BOOLEAN, BYTES, DURATION, LIST
  }

  private final String name;
  private final Type type;
  private final String defaultValue;
  private final String doc;
  private final Predicate<T> validator;
  private final String validatorDescription;

  private PropertyKey(String name, Type type, String defaultValue, String doc, Predicate<T> validator,
      String validatorDescription) {
    this.name = Objects.requireNonNull(name);
    this.type = Objects.requireNonNull(type);
    this.defaultValue = defaultValue;
    this.doc = Objects.requireNonNull(doc);
    this.validator = validator;
    this.validatorDescription = validatorDescription;
  }

  public static Builder<String> stringKey(String name) {
    return new Builder<>(name, Type.STRING);
  }

  public static Builder<Integer> intKey(String name) {
    return new Builder<>(name, Type.INT);
  }

  public static Builder<Long> longKey(String name) {
    return new Builder<>(name, Type.LONG);
  }

  public static Builder<Double> doubleKey(String name) {
    return new Builder<>(name, Type.DOUBLE);
  }

  public static Builder<Boolean> booleanKey(String name) {
    return new Builder<>(name, Type.BOOLEAN);
  }

  /** A size in bytes written as {@code 64MB}, {@code 1GiB}, {@code 4096}. */
  public static Builder<Long> bytesKey(String name) {
    return new Builder<>(name, Type.BYTES);
  }

  /** A duration written as {@code 500ms}, {@code 10s}, {@code 5min}, {@code 1h}. */
  public static Builder<java.time.Duration> durationKey(String name) {
    return new Builder<>(name, Type.DURATION);
  }

  /** A comma separated list of strings. */
  public static Builder<java.util.List<String>> listKey(String name) {
    return new Builder<>(name, Type.LIST);
  }

  public String name() {
    return name;
  }

  public Type type() {
    return type;
  }

  /** The default in its string form, or null when the key has none. */
  public String defaultValue() {
    return defaultValue;
  }

  public String doc() {
    return doc;
  }

  /** The environment variable that sets this key: {@code strata.master.rpc.port} → STRATA_MASTER_RPC_PORT. */
  public String envName() {
    return name.toUpperCase(java.util.Locale.ROOT).replace('.', '_');
  }

  @SuppressWarnings("unchecked")
  T parse(String raw) {
    T value = (T) ValueParser.parse(this, raw);
    if (validator != null && !validator.test(value)) {
      throw new IllegalArgumentException(
          "Invalid value '" + raw + "' for " + name + ": must be " + validatorDescription);
    }
    return value;
  }

  @Override
  public String toString() {
    return name;
  }

  /** Builds a key; {@link #build()} once. */
  public static final class Builder<T> {
    private final String name;
    private final Type type;
    private String defaultValue;
    private String doc = "";
    private Predicate<T> validator;
    private String validatorDescription;

    private Builder(String name, Type type) {
      this.name = name;
      this.type = type;
    }

    public Builder<T> defaultValue(Object value) {
      this.defaultValue = value == null ? null : String.valueOf(value);
      return this;
    }

    public Builder<T> doc(String doc) {
      this.doc = doc;
      return this;
    }

    public Builder<T> validate(Predicate<T> validator, String description) {
      this.validator = validator;
      this.validatorDescription = description;
      return this;
    }

    public PropertyKey<T> build() {
      return new PropertyKey<>(name, type, defaultValue, doc, validator, validatorDescription);
    }
  }
}
