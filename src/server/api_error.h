// ApiError: an error answer in the shape the OpenAI API and its clients expect,
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// with the HTTP status that goes with it. Every failure the server reports to a client is
// one of these, so clients (the openai package included) can raise their typed errors.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sf::server {

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the request field at fault; "" -> null
  std::string code;   // machine-readable reason; "" -> null

  nlohmann::json to_json() const;

  static ApiError bad_request(std::string message, std::string param = "", std::string code = "");
  static ApiError unauthorized(std::string message);
  static ApiError not_found(std::string message, std::string param = "", std::string code = "");
  static ApiError overloaded(std::string message);  // 503: no slot could be had
  static ApiError internal(std::string message);    // 500: the engine failed
};

}  // namespace sf::server
