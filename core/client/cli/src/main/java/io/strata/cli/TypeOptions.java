package io.strata.cli;

import io.strata.client.options.ReadType;
import io.strata.client.options.WriteType;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses {@code --write-type} and {@code --read-type} values (case-insensitive). A bad value is a usage
 * error (exit 2) that names the valid values. Stateless.
 */
final class TypeOptions {
  private TypeOptions() {}

  static <E extends Enum<E>> E parse(Class<E> type, String what, String value) {
    try {
      return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      String valid = Arrays.stream(type.getEnumConstants()).map(Enum::name).collect(Collectors.joining(", "));
      throw new TypeConversionException("'" + value + "' is not a " + what + ": use one of " + valid);
    }
  }

  /** MUST_CACHE, CACHE_THROUGH, THROUGH or ASYNC_THROUGH. */
  static final class WriteTypeConverter implements ITypeConverter<WriteType> {
    @Override
    public WriteType convert(String value) {
      return parse(WriteType.class, "write type", value);
    }
  }

  /** NO_CACHE, CACHE or CACHE_PROMOTE. */
  static final class ReadTypeConverter implements ITypeConverter<ReadType> {
    @Override
    public ReadType convert(String value) {
      return parse(ReadType.class, "read type", value);
    }
  }
}
